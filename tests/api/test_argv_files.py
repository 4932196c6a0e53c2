"""A workspace admin's API key cannot make the sandbox show the server's files (a security
finding: ``config.argv`` naming ``/root/.bashrc`` was bound read-only): the harness is refused
with 403 naming ``config.argv[i]``, and a run of one stored before the rule with 403 naming
``harness.config.argv[i]``; an installation admin's key registers it."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from benchbook.services import accounts, harnesses, registered
from benchbook.services.context import Context, Principal
from tests.api.people import bearer, error_code, person, register


def _body(path: Path) -> dict[str, object]:
    reader = 'for f in "$@"; do head -c 200 "$f"; done'
    argv = ["sh", "-c", reader, "x", str(path), "/etc/passwd"]
    return {"id": "read6", "version": "1.0.0", "kind": "command", "config": {"argv": argv}}


def test_a_workspace_admins_key_gets_the_refusal_naming_the_argv_element(
    client: TestClient, ctx: Context, tmp_path: Path
) -> None:
    secret = tmp_path / ".bashrc"
    secret.write_text("server-private")
    wanda = person(ctx, "wanda", "admin")
    refused = client.post("/api/harnesses", json=_body(secret), headers=bearer(wanda))
    assert error_code(refused) == (403, "forbidden"), refused.text
    body = refused.json()
    assert body["message"].startswith(f"config.argv[4]: {secret} is a file outside"), body
    assert "BENCHBOOK_SANDBOX_RO_PATHS" in body["message"]
    assert body["details"]["path"] == "config.argv[4]"
    missing = client.get("/api/harnesses/read6/versions/latest", headers=bearer(wanda))
    assert missing.status_code == 404
    ian = person(ctx, "ian", "admin", admin=True)
    stored = client.post("/api/harnesses", json=_body(secret), headers=bearer(ian))
    assert stored.status_code == 201, stored.text


def test_a_run_of_a_workspace_admins_harness_stored_before_the_rule_is_refused(
    client: TestClient, ctx: Context, tmp_path: Path
) -> None:
    secret = tmp_path / ".bashrc"
    secret.write_text("server-private")
    wanda = person(ctx, "wanda", "admin")
    register(ctx)
    user_id = next(u.id for u in accounts.list_users(ctx) if u.email == "wanda@example.org")
    author = Principal(user_id=user_id, display_name="Wanda", workspace=ctx.workspace, role="admin")
    as_wanda = Context(principal=author, engine=ctx.engine, settings=ctx.settings)
    harness = harnesses.parse_harness(_body(secret))
    registered.store_version(as_wanda, harnesses.HARNESS, harness, ctx.workspace)
    started = client.post(
        "/api/runs", json={"dataset": "arith", "harness": "read6@1.0.0"}, headers=bearer(wanda)
    )
    assert error_code(started) == (403, "forbidden"), started.text
    assert started.json()["details"]["path"] == "harness.config.argv[4]"
