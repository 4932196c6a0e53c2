"""Form posts on the dashboard (issue 14 items 8 and 9) over plain HTTP: a refused post
re-renders its form with the message beside the field and the input kept (never the full-page
error), a done post answers 303 (POST-redirect-GET) and the next page reports it once."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from benchbook.app import create_app
from benchbook.services import accounts, comments, datasets
from benchbook.services.context import Context
from benchbook.settings import Settings

PASSWORD = "correct-horse-battery"


@pytest.fixture
def client(engine: Engine, settings: Settings, ctx: Context) -> Iterator[TestClient]:
    """The whole app with an admin (Ada) and a viewer (Vic); not logged in yet."""
    accounts.create_user(ctx, "ada@example.org", "Ada", PASSWORD)
    accounts.add_member(ctx, "ada@example.org", "admin")
    accounts.create_user(ctx, "vic@example.org", "Vic", PASSWORD)
    accounts.add_member(ctx, "vic@example.org", "viewer")
    payload = {"id": "tour", "version": "1.0.0", "cases": []}
    datasets.register_dataset(ctx, datasets.parse_dataset(payload))
    with TestClient(create_app(settings, engine), follow_redirects=False) as http:
        yield http


def _log_in(client: TestClient, email: str) -> str:
    """Log in and return the session's CSRF token."""
    client.cookies.clear()
    token = re.search(r'name="csrf" value="([^"]+)"', client.get("/login").text)
    assert token
    form = {"email": email, "password": PASSWORD, "csrf": token.group(1), "next": "/"}
    assert client.post("/login", data=form).status_code == 303
    meta = re.search(r'name="csrf-token" content="([^"]+)"', client.get("/account").text)
    assert meta
    return meta.group(1)


def _field_error(page: str) -> str:
    found = re.findall(r'<p class="field-error" id="([^"]+)"[^>]*>(.*?)</p>', page, re.S)
    assert len(found) == 1, found
    return f"{found[0][0]}: {html.unescape(found[0][1])}"


def _refused(response: object, status: int) -> str:
    """The page of a refused post: the form page itself (not error.html) with ``status``."""
    text: str = response.text  # type: ignore[attr-defined]
    assert response.status_code == status, text[:400]  # type: ignore[attr-defined]
    assert 'class="status-code"' not in text  # never the full-page error
    return text


def test_refused_dataset_forms_come_back_with_the_message_beside_the_field_and_input_kept(
    client: TestClient,
) -> None:
    csrf = _log_in(client, "ada@example.org")
    wrong = {"csrf": csrf, "scope": "some", "version": "1.0.0", "confirm": "tuor"}
    page = _refused(client.post("/datasets/tour/delete?v=1.0.0", data=wrong), 400)
    assert _field_error(page) == (
        "delete-confirm-error: type the dataset id (tour) to confirm the delete"
    )
    assert 'value="tuor"' in page and "data-open-on-load" in page
    assert re.search(r'name="version" value="1.0.0" checked', page)
    none_ticked = {"csrf": csrf, "scope": "some", "confirm": "tour"}
    page = _refused(client.post("/datasets/tour/delete", data=none_ticked), 400)
    assert _field_error(page) == "delete-version-error: tick at least one version to delete"

    reserved = {"csrf": csrf, "version": "1.0.0", "tags": "stable, latest"}
    page = _refused(client.post("/datasets/tour/tags", data=reserved), 400)
    assert _field_error(page).startswith("tags-tags-error: ") and "latest" in _field_error(page)
    assert 'value="stable, latest"' in page and 'aria-invalid="true"' in page

    page = _refused(client.post("/datasets/tour/comments", data={"csrf": csrf, "body": "  "}), 400)
    assert _field_error(page) == "comment-body-error: body: must not be empty"
    assert datasets.list_dataset_versions  # the dataset is untouched: still listed below
    assert client.get("/datasets/tour").status_code == 200


def test_refused_account_and_member_forms_come_back_beside_the_field(client: TestClient) -> None:
    csrf = _log_in(client, "ada@example.org")
    bad_name = {"csrf": csrf, "name": "1 bad name", "value": "s3cret"}
    page = _refused(client.post("/account/secrets", data=bad_name), 400)
    assert _field_error(page).startswith("secret-name-error: secret name must be")
    assert 'value="1 bad name"' in page and "s3cret" not in page  # the value is never echoed
    unknown = {"csrf": csrf, "email": "nobody@example.org", "role": "admin"}
    page = _refused(client.post("/members", data=unknown), 404)
    assert _field_error(page) == "member-email-error: user 'nobody@example.org' not found"
    assert 'value="nobody@example.org"' in page
    assert re.search(r'<option value="admin"\s+selected>', page)

    csrf = _log_in(client, "vic@example.org")
    over = {"csrf": csrf, "name": "ci-runner", "scope": "write"}
    page = _refused(client.post("/account/keys", data=over), 400)
    assert _field_error(page).startswith("key-scope-error: scope 'write' exceeds")
    assert 'value="ci-runner"' in page and re.search(r'<option value="write"\s+selected>', page)


def test_done_posts_redirect_and_the_next_page_reports_them_once(
    client: TestClient, ctx: Context
) -> None:
    csrf = _log_in(client, "ada@example.org")
    made = client.post("/account/keys", data={"csrf": csrf, "name": "ci-runner", "scope": "read"})
    assert made.status_code == 303 and made.headers["location"] == "/account#keys"
    shown = client.get("/account")
    assert "Key ci-runner created." in shown.text
    key = re.search(r'data-testid="new-key">(bb_[^<]+)<', shown.text)
    assert key is not None
    again = client.get("/account")  # a refresh: neither the notice nor the key again
    assert "Key ci-runner created." not in again.text and key.group(1) not in again.text
    key_id = re.search(r'action="/account/keys/([^"/]+)/revoke"', again.text)
    assert key_id is not None
    form = re.search(r'<form[^>]*action="/account/keys/[^"]+/revoke"[^>]*>', again.text)
    assert form is not None and "data-confirm=" in form.group(0)
    revoked = client.post(f"/account/keys/{key_id.group(1)}/revoke", data={"csrf": csrf})
    assert revoked.status_code == 303
    assert "Key ci-runner revoked." in client.get("/account").text

    comment = comments.create_comment(ctx, "dataset", "tour", "first!")
    page = client.get("/datasets/tour").text
    assert re.search(r'<form[^>]*comments/\d+/delete"[^>]*data-confirm="Delete this comment', page)
    gone = client.post(f"/datasets/tour/comments/{comment.id}/delete", data={"csrf": csrf})
    assert gone.status_code == 303 and gone.headers["location"] == "/datasets/tour#activity"
    assert "Comment deleted." in client.get("/datasets/tour").text

    vic = next(m for m in accounts.list_members(ctx) if m.email == "vic@example.org")
    members = client.get("/members").text
    assert re.search(r'<form[^>]*/remove"[^>]*data-confirm="Remove vic@example.org', members)
    removed = client.post(f"/members/{vic.user_id}/remove", data={"csrf": csrf})
    assert removed.status_code == 303
    assert "vic@example.org removed from default." in client.get("/members").text
    client.cookies.set("benchbook_notice", "0" * 32 + ".Hacked")
    forged = client.get("/members")
    assert "Hacked" not in forged.text


def test_an_unknown_sort_or_owner_on_the_datasets_list_is_a_400_naming_it(
    client: TestClient,
) -> None:
    _log_in(client, "ada@example.org")
    for named, value in (("sort", "size"), ("owner", "mine")):
        page = client.get(f"/datasets?{named}={value}")
        assert page.status_code == 400
        text = html.unescape(page.text)
        assert f"Bad query parameter {named}: “{value}” is not valid" in text
    assert client.get("/datasets?sort=updated&owner=own").status_code == 200


def test_the_api_docs_load_only_benchbooks_own_files_and_declare_both_schemes(
    client: TestClient,
) -> None:
    page = client.get("/api/docs")
    assert page.status_code == 200
    sources = re.findall(r'(?:src|href)="([^"]+)"', page.text)
    assert sources and all(s.startswith("/") for s in sources), sources
    for source in sources:
        assert client.get(source).status_code == 200, source
    document = client.get("/api/openapi.json").json()
    schemes = document["components"]["securitySchemes"]
    assert schemes["bearer"] == {**schemes["bearer"], "type": "http", "scheme": "bearer"}
    assert (schemes["session"]["in"], schemes["session"]["name"]) == ("cookie", "benchbook_session")
    assert document["security"] == [{"bearer": []}, {"session": []}, {}]
