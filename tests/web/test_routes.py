"""Dashboard routing over plain HTTP (``create_app(settings, engine)`` + TestClient, no browser):
case ids with ``/``, spaces, ``#``, ``?`` and unicode open their case page from the links the
dataset page prints, and everything outside ``/api`` and ``/mcp`` answers HTML error pages.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from urllib.parse import unquote

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from benchbook.app import create_app
from benchbook.services import datasets
from benchbook.services.context import Context
from benchbook.settings import Settings

#: Case ids a path must carry. ``%`` is left to ``test_case_links.py`` (real server and
#: browser): Starlette's TestClient unquotes the already-decoded path a second time.
ODD_IDS = [
    "chrome/030eeff7-b492-4218-b312-701ec99ee0cc",
    "with space and #hash?query=1&x",
    "ünïcødé/日本語 ✓",
    "a/../b",
    "..",
    "/leading//double/",
    ".",
    "plus+sign=1;x,y@z",
]


@pytest.fixture
def client(engine: Engine, settings: Settings) -> Iterator[TestClient]:
    """The whole app (API + dashboard) in local admin mode (no users: no login needed); form
    posts come from the same origin."""
    app = create_app(settings, engine)
    same_origin = {"origin": "http://testserver"}
    with TestClient(app, follow_redirects=False, headers=same_origin) as http:
        yield http


def _register(ctx: Context, dataset_id: str, version: str, case_ids: list[str]) -> None:
    cases = [
        {"id": cid, "env": {"kind": "prompt"}, "task": f"Task of {cid}", "expected": "ok"}
        for cid in case_ids
    ]
    payload = {"id": dataset_id, "version": version, "cases": cases}
    datasets.register_dataset(ctx, datasets.parse_dataset(payload))


def _hrefs(page: str) -> list[str]:
    return [html.unescape(h) for h in re.findall(r'href="([^"]*)"', page)]


def test_every_case_link_on_the_dataset_page_opens_that_case(
    client: TestClient, ctx: Context
) -> None:
    _register(ctx, "odd", "1.0.0", ODD_IDS)
    page = client.get("/datasets/odd", params={"cases": 50})
    assert page.status_code == 200
    links = [h for h in _hrefs(page.text) if "/cases/" in h]
    assert len(links) == len(ODD_IDS)
    for link in links:
        assert "#" not in link and " " not in link, link
        case = client.get(link)
        assert case.status_code == 200, (link, case.text[:300])
        assert case.headers["content-type"].startswith("text/html")
        shown = re.search(r"<h1>Case <code>(.*?)</code></h1>", case.text)
        assert shown is not None
        assert html.unescape(shown.group(1)) in ODD_IDS
    opened = {html.unescape(re.findall(r"Task of (.*?)<", client.get(h).text)[0]) for h in links}
    assert opened == set(ODD_IDS)


def test_a_case_id_with_a_slash_opens_written_plainly_or_percent_encoded(
    client: TestClient, ctx: Context
) -> None:
    _register(ctx, "osworld", "1.0.0", ["chrome/030eeff7", "chrome"])
    for path in (
        "/datasets/osworld/cases/chrome/030eeff7?v=1.0.0",
        "/datasets/osworld/cases/chrome%2F030eeff7?v=1.0.0",
    ):
        response = client.get(path)
        assert response.status_code == 200, path
        assert "Task of chrome/030eeff7" in response.text
    assert "Task of chrome<" in client.get("/datasets/osworld/cases/chrome").text
    missing = client.get("/datasets/osworld/cases/chrome/nope")
    assert missing.status_code == 404
    assert missing.headers["content-type"].startswith("text/html")
    assert "chrome/nope" in html.unescape(missing.text)


def test_links_and_forms_encode_versions_and_tags_in_queries(
    client: TestClient, ctx: Context
) -> None:
    _register(ctx, "tagged", "1.0.0+build.7", ["q0"])
    _register(ctx, "tagged", "1.1.0", ["q0", "q1"])
    datasets.set_dataset_version_tags(ctx, "tagged", "1.0.0+build.7", ["paper & co"])
    page = client.get("/datasets/tagged", params={"v": "1.0.0+build.7"})
    assert page.status_code == 200
    hrefs = _hrefs(page.text)
    assert "/datasets/tagged/cases/q0?v=1.0.0%2Bbuild.7" in hrefs
    assert "/datasets/tagged?v=paper%20%26%20co" in hrefs
    by_tag = client.get("/datasets/tagged?v=paper%20%26%20co")
    assert by_tag.status_code == 200 and "1.0.0+build.7" in by_tag.text
    posted = client.post(
        "/datasets/tagged/tags", data={"version": "1.0.0+build.7", "tags": "paper & co"}
    )
    assert posted.status_code == 303
    assert posted.headers["location"] == "/datasets/tagged?v=1.0.0%2Bbuild.7"


@pytest.mark.parametrize(
    "path", ["/nope", "/imports", "/benchmarks", "/datasets/x/1.0.0", "/static/nope.css"]
)
def test_an_unknown_dashboard_path_is_an_html_404_page(client: TestClient, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("text/html")
    assert ">Not found</h1>" in response.text
    assert path in unquote(html.unescape(response.text))


def test_a_wrong_method_on_a_page_is_an_html_405_page(client: TestClient) -> None:
    response = client.put("/datasets")
    assert response.status_code == 405
    assert response.headers["content-type"].startswith("text/html")
    assert response.headers["Allow"] == "GET"


@pytest.mark.parametrize(
    ("query", "parameter"),
    [("after=zzz", "after"), ("cases=abc", "cases"), ("after=1.5", "after")],
)
def test_a_bad_query_value_is_an_html_400_page_naming_the_parameter(
    client: TestClient, ctx: Context, query: str, parameter: str
) -> None:
    _register(ctx, "x", "1.0.0", ["q0"])
    response = client.get(f"/datasets/x?{query}")
    assert response.status_code == 400
    assert response.headers["content-type"].startswith("text/html")
    text = html.unescape(response.text)
    assert ">That did not work</h1>" in text
    assert f"query parameter {parameter}" in text
    assert query.split("=")[1] in text


def test_a_bad_offset_on_the_list_is_an_html_400_page(client: TestClient) -> None:
    response = client.get("/datasets?offset=many")
    assert response.status_code == 400
    assert response.headers["content-type"].startswith("text/html")
    assert "query parameter offset" in response.text


@pytest.mark.parametrize(
    ("path", "parameter"),
    [
        (f"/datasets/x?after={2**64}", "after"),
        ("/datasets/x?after=-1", "after"),
        (f"/datasets?offset={2**64}", "offset"),
        ("/datasets?q=a%00b", "q"),
        (f"/datasets?q={'a' * 60_000}", "search: at most 512 characters"),
        (f"/datasets?q={'_' * 60_000}", "search: at most 512 characters"),
        (f"/datasets/x?q={'a' * 60_000}", "q: at most 512 characters"),
        (f"/runs?harness={'a' * 60_000}", "harness: at most 512 characters"),
    ],
)
def test_out_of_range_cursors_and_nul_queries_are_html_400_pages_naming_the_parameter(
    client: TestClient, ctx: Context, path: str, parameter: str
) -> None:
    _register(ctx, "x", "1.0.0", ["q0"])
    response = client.get(path)
    assert response.status_code == 400, response.text[:300]
    assert response.headers["content-type"].startswith("text/html")
    assert parameter in html.unescape(response.text)


def test_a_comment_with_a_nul_byte_is_an_html_400_page(client: TestClient, ctx: Context) -> None:
    _register(ctx, "x", "1.0.0", ["q0"])
    response = client.post(
        "/datasets/x/comments", data={"body": "a\x00b", "resource_type": "dataset"}
    )
    assert response.status_code == 400, response.text[:300]
    assert "NUL" in response.text
    big = client.post(f"/datasets/x/comments/{2**64}/delete")
    assert big.status_code == 400, big.text[:300]
    assert "comment_id" in big.text


@pytest.mark.parametrize("path", ["/datasets", "/recipes", "/login", "/import", "/no/such/page"])
def test_every_page_carries_security_headers_and_a_csp_without_inline_script(
    client: TestClient, path: str
) -> None:
    response = client.get(path)
    assert response.headers["content-type"].startswith("text/html")
    csp = response.headers["content-security-policy"]
    directives = dict(d.strip().split(" ", 1) for d in csp.split(";") if d.strip())
    assert directives["script-src"] == "'self'"  # no 'unsafe-inline', no 'unsafe-eval'
    assert directives["frame-ancestors"] == "'none'"
    assert "unsafe" not in csp
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "same-origin"
    executable = re.findall(r"<script(?![^>]*\bsrc=)(?![^>]*application/json)[^>]*>", response.text)
    assert executable == []  # every script is a file (or a JSON data block)
    assert not re.search(r"\son[a-z]+=", response.text)  # no inline event handlers


def test_static_files_are_nosniff_and_the_api_docs_keep_their_own_policy(
    client: TestClient,
) -> None:
    assert client.get("/static/app.js").headers["x-content-type-options"] == "nosniff"
    assert "content-security-policy" not in client.get("/api/docs").headers


def test_deeply_nested_json_in_the_wizard_preview_is_a_400_not_a_500(client: TestClient) -> None:
    deep = b'{"request": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    response = client.post(
        "/import/preview", content=deep, headers={"content-type": "application/json"}
    )
    assert response.status_code == 400, response.text[:200]
    assert response.json()["code"] == "invalid_input"
    assert "depth" in response.json()["message"]


def test_api_and_mcp_paths_keep_the_json_envelope(client: TestClient) -> None:
    for path in ("/api/nope", "/api/datasets/x/versions/1.0.0/cases/a/b"):
        response = client.get(path)
        assert response.status_code == 404
        assert response.json()["code"] == "not_found"
    bad = client.get("/api/datasets?limit=zzz")
    assert bad.status_code == 400 and bad.json()["code"] == "invalid_input"
    mcp = client.get("/mcp/nope")
    assert not mcp.headers.get("content-type", "").startswith("text/html")


def test_the_wizard_json_calls_keep_the_json_envelope(client: TestClient) -> None:
    missing = client.get("/import/jobs/no-such-job")
    assert missing.status_code == 404 and missing.json()["code"] == "not_found"
    bad = client.get("/import/hf/source")
    assert bad.status_code == 400 and bad.json()["code"] == "invalid_input"


def test_a_json_answer_shows_as_json_with_every_digit(client: TestClient, ctx: Context) -> None:
    expected = {"ok": True, "n": 123456789012345678901234567890, "none": None}
    case = {"id": "j", "env": {"kind": "prompt"}, "task": "t", "expected": expected}
    datasets.register_dataset(
        ctx, datasets.parse_dataset({"id": "typed", "version": "1.0.0", "cases": [case]})
    )
    for url in ("/datasets/typed/cases/j?v=1.0.0", "/datasets/typed?v=1.0.0"):
        page = html.unescape(client.get(url).text)
        assert '"n": 123456789012345678901234567890' in page and '"ok": true' in page
        assert "True" not in page and "None," not in page
