"""Comment routes (SPEC D): list oldest first, create with replies, delete by author or admin,
404 across workspaces, small body limit, CSRF for cookie writes — on both backends."""

from __future__ import annotations

from fastapi.testclient import TestClient

from benchbook.api.comments import COMMENT_BODY_BYTES
from benchbook.services.context import Context
from tests.api.people import bearer, error_code, login, other_workspace, person, register

ON_ARITH = {"resource_type": "dataset", "resource_id": "arith"}


def _comment(client: TestClient, key: str, body: str, parent_id: int | None = None) -> int:
    response = client.post(
        "/api/comments",
        json={**ON_ARITH, "body": body, "parent_id": parent_id},
        headers=bearer(key),
    )
    assert response.status_code == 201, response.text
    comment_id: int = response.json()["id"]
    return comment_id


def _bodies(client: TestClient, key: str) -> list[str]:
    response = client.get("/api/comments", params=ON_ARITH, headers=bearer(key))
    assert response.status_code == 200, response.text
    return [c["body"] for c in response.json()]


def test_a_member_comments_and_replies_and_everyone_reads_them_oldest_first(
    client: TestClient, ctx: Context
) -> None:
    register(ctx)
    mia, vic = person(ctx, "mia"), person(ctx, "vic", "viewer")
    first = _comment(client, mia, "  q3 looks mislabelled  ")
    reply = client.post(
        "/api/comments",
        json={**ON_ARITH, "body": "agreed", "parent_id": first},
        headers=bearer(mia),
    ).json()
    assert reply["parent_id"] == first and reply["resource_id"] == "arith"
    assert _bodies(client, vic) == ["q3 looks mislabelled", "agreed"]


def test_a_viewer_cannot_comment(client: TestClient, ctx: Context) -> None:
    register(ctx)
    vic = person(ctx, "vic", "viewer")
    response = client.post("/api/comments", json={**ON_ARITH, "body": "hi"}, headers=bearer(vic))
    assert error_code(response) == (403, "forbidden")
    assert _bodies(client, vic) == []


def test_only_the_author_or_an_admin_deletes_a_comment_and_its_replies_go_with_it(
    client: TestClient, ctx: Context
) -> None:
    register(ctx)
    mia, max_, ada = person(ctx, "mia"), person(ctx, "max"), person(ctx, "ada", "admin")
    first = _comment(client, mia, "first")
    _comment(client, max_, "reply", parent_id=first)
    second = _comment(client, mia, "second")
    denied = client.delete(f"/api/comments/{first}", headers=bearer(max_))
    assert error_code(denied) == (403, "forbidden")
    assert client.delete(f"/api/comments/{first}", headers=bearer(mia)).status_code == 204
    assert _bodies(client, ada) == ["second"]
    assert client.delete(f"/api/comments/{second}", headers=bearer(ada)).status_code == 204
    assert error_code(client.delete(f"/api/comments/{second}", headers=bearer(ada))) == (
        404,
        "not_found",
    )
    assert _bodies(client, mia) == []


def test_another_workspaces_dataset_and_comments_are_404(client: TestClient, ctx: Context) -> None:
    register(ctx)
    ada = person(ctx, "ada", "admin")
    there = other_workspace(ctx, "hidden")
    on_hidden = {"resource_type": "dataset", "resource_id": "hidden"}
    listed = client.get("/api/comments", params=on_hidden, headers=bearer(ada))
    assert error_code(listed) == (404, "not_found")
    created = client.post("/api/comments", json={**on_hidden, "body": "x"}, headers=bearer(ada))
    assert error_code(created) == (404, "not_found")
    from benchbook.services.comments import create_comment

    theirs = create_comment(there, "dataset", "hidden", "private note")
    response = client.delete(f"/api/comments/{theirs.id}", headers=bearer(ada))
    assert error_code(response) == (404, "not_found")


def test_bad_comment_input_is_400_naming_the_field(client: TestClient, ctx: Context) -> None:
    register(ctx)
    mia = person(ctx, "mia")
    blank = client.post("/api/comments", json={**ON_ARITH, "body": "   "}, headers=bearer(mia))
    assert error_code(blank) == (400, "invalid_input")
    assert blank.json()["details"]["errors"][0]["path"] == "body"
    kind = client.post(
        "/api/comments",
        json={"resource_type": "gizmo", "resource_id": "arith", "body": "x"},
        headers=bearer(mia),
    )
    assert error_code(kind) == (400, "invalid_input")
    assert "resource_type" in kind.json()["details"]["errors"][0]["path"]
    orphan = client.post(
        "/api/comments", json={**ON_ARITH, "body": "x", "parent_id": 999}, headers=bearer(mia)
    )
    assert orphan.json()["details"]["errors"][0]["path"] == "parent_id"
    assert _bodies(client, mia) == []


def test_a_comment_request_over_the_small_limit_is_413_and_stores_nothing(
    client: TestClient, ctx: Context
) -> None:
    register(ctx)
    mia = person(ctx, "mia")
    huge = {**ON_ARITH, "body": "x" * (COMMENT_BODY_BYTES + 1)}
    response = client.post("/api/comments", json=huge, headers=bearer(mia))
    assert error_code(response) == (413, "payload_too_large")
    assert f"limit of {COMMENT_BODY_BYTES} bytes" in response.json()["message"]
    chunked = client.post(
        "/api/comments",
        content=iter([b'{"body": "', b"y" * COMMENT_BODY_BYTES, b'"}']),
        headers={**bearer(mia), "content-type": "application/json"},
    )
    assert error_code(chunked) == (413, "payload_too_large")
    assert _bodies(client, mia) == []


def test_a_session_cookie_comments_only_with_its_csrf_token(
    client: TestClient, ctx: Context
) -> None:
    register(ctx)
    person(ctx, "mia")
    csrf = login(client, "mia")
    payload = {**ON_ARITH, "body": "from the browser"}
    assert error_code(client.post("/api/comments", json=payload)) == (403, "forbidden")
    wrong = client.post("/api/comments", json=payload, headers={"X-CSRF-Token": "0" * 64})
    assert error_code(wrong) == (403, "forbidden")
    assert client.get("/api/comments", params=ON_ARITH).json() == []
    right = client.post("/api/comments", json=payload, headers={"X-CSRF-Token": csrf})
    assert right.status_code == 201
    assert right.json()["author"] == client.get("/api/me").json()["user_id"]


def test_other_json_routes_get_the_default_limit_but_dataset_uploads_are_streamed_past_it(
    client: TestClient, ctx: Context
) -> None:
    from benchbook.transports.limits import DEFAULT_JSON_BODY_BYTES
    from tests.api.conftest import dataset_body

    register(ctx)
    ada = person(ctx, "ada", "admin")
    tags = {"tags": ["t" * 1000] * (DEFAULT_JSON_BODY_BYTES // 1000 + 1)}
    response = client.put("/api/datasets/arith/versions/1.0.0/tags", json=tags, headers=bearer(ada))
    assert error_code(response) == (413, "payload_too_large")
    big = dataset_body("big", n=3)
    for case in big["cases"]:
        case["task"] = "x" * (DEFAULT_JSON_BODY_BYTES // 2)
    assert client.post("/api/datasets", json=big, headers=bearer(ada)).status_code == 201
