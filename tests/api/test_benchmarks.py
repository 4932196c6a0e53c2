"""Benchmark routes: catalog, preview and import over JSON and multipart (SPEC D, E)."""

from __future__ import annotations

import gzip
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from benchbook.settings import Settings
from tests.api.conftest import listing, make_client
from tests.cli.conftest import invoke

IMPORT = "/api/benchmarks/import"
PREVIEW = "/api/benchmarks/preview"


def gsm8k_text(n: int, start: int = 0) -> str:
    """``n`` GSM8K-shaped JSONL rows whose final answers are ``start…start+n-1``."""
    rows = [
        {"question": f"What is {i} plus zero?", "answer": f"{i} + 0 = {i}\n#### {i}"}
        for i in range(start, start + n)
    ]
    return "\n".join(orjson.dumps(r).decode() for r in rows) + "\n"


def inline_spec(**origin: str) -> dict[str, Any]:
    """A small inline recipe reading a JSONL upload with ``q``/``a`` columns."""
    spec: dict[str, Any] = {
        "id": "mini",
        "source": {"kind": "file", "format": "jsonl"},
        "mapping": {"id_field": "key", "task_field": "q", "answer_field": "a"},
    }
    if origin:
        spec["origin"] = origin
    return spec


def multipart(request: dict[str, Any], name: str, data: bytes) -> dict[str, Any]:
    """``files=`` for TestClient: the ``request`` JSON part and the ``file`` part."""
    return {
        "request": (None, orjson.dumps(request), "application/json"),
        "file": (name, data, "application/octet-stream"),
    }


@pytest.fixture
def upload_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private temporary directory for upload files, to check they are removed."""
    tmp = tmp_path / "uploads"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    return tmp


def test_the_catalog_lists_gsm8k_with_its_origin_and_scoring(client: TestClient) -> None:
    catalog = client.get("/api/benchmarks").json()
    ids = [b["id"] for b in catalog]
    assert ids == sorted(ids)
    assert {"gsm8k", "webvoyager", "trek", "osworld"} <= set(ids)
    gsm8k = client.get("/api/benchmarks/gsm8k").json()
    assert gsm8k["source"]["dataset"] == "openai/gsm8k"
    assert gsm8k["scoring"]["kind"] == "official"
    assert gsm8k["origin"]["paper"].startswith("https://")
    missing = client.get("/api/benchmarks/no-such-bench")
    assert missing.status_code == 404
    assert "gsm8k" in missing.json()["message"]


def test_preview_of_inline_text_shows_rows_cases_and_the_assertion(client: TestClient) -> None:
    request = {"benchmark": "gsm8k", "text": gsm8k_text(30), "format": "jsonl"}
    preview = client.post(PREVIEW, json=request).json()
    assert preview["fields"] == ["question", "answer"]
    assert len(preview["rows"]) == 20
    assert preview["cases"][3]["expected"] == "3"
    assert preview["cases"][3]["id"] == "gsm8k-3"
    assert "question" in preview["assertion"]
    assert client.get("/api/datasets").json()["total"] == 0


def test_preview_accepts_a_multipart_upload(client: TestClient, upload_tmp: Path) -> None:
    files = multipart({"benchmark": "gsm8k"}, "test.jsonl", gsm8k_text(5).encode())
    preview = client.post(PREVIEW, files=files).json()
    assert [c["expected"] for c in preview["cases"]] == ["0", "1", "2", "3", "4"]
    assert list(upload_tmp.iterdir()) == []


def test_importing_inline_text_registers_then_reports_unchanged(client: TestClient) -> None:
    request = {"benchmark": "gsm8k", "text": gsm8k_text(12), "format": "jsonl"}
    first = client.post(IMPORT, json=request)
    assert first.status_code == 201, first.text
    assert first.json() | {"content_hash": ""} == {
        "workspace": "default",
        "id": "gsm8k",
        "version": "1.0.0",
        "cases": 12,
        "created": True,
        "revived": False,
        "content_hash": "",
        "identical_to": None,
        "notes": [],
    }
    again = client.post(IMPORT, json=request)
    assert again.status_code == 200
    assert again.json()["created"] is False
    view = client.get("/api/datasets/gsm8k/versions/1.0.0?limit=1").json()
    assert view["version"]["produced_by"]["via"] == "catalog"
    assert view["version"]["produced_by"]["source"]["sha256"]


def test_a_multipart_gzip_upload_imports_with_a_bump(client: TestClient, upload_tmp: Path) -> None:
    plain = {"benchmark": "gsm8k", "id": "math"}
    files = multipart(plain, "rows.jsonl", gsm8k_text(4).encode())
    assert client.post(IMPORT, files=files).json()["version"] == "1.0.0"
    packed = gzip.compress(gsm8k_text(6, start=100).encode())
    bumped = client.post(IMPORT, files=multipart(plain | {"bump": "minor"}, "r.jsonl.gz", packed))
    assert bumped.status_code == 201, bumped.text
    assert (bumped.json()["version"], bumped.json()["cases"]) == ("1.1.0", 6)
    source = client.get("/api/datasets/math/versions/1.1.0").json()["version"]["produced_by"]
    assert source["source"]["kind"] == "file"  # as `--file r.jsonl.gz` records it
    assert source["source"]["file"] == "r.jsonl.gz"
    diff = client.get("/api/datasets/math/diff?base=1.0.0&candidate=1.1.0").json()
    assert diff["summary"] == {"added": 2, "removed": 0, "changed": 4, "unchanged": 0}
    assert list(upload_tmp.iterdir()) == []


def test_the_real_gsm8k_test_split_uploads_and_bumps_with_train_rows(
    client: TestClient, shared_data: Path
) -> None:
    test_file = shared_data / "gsm8k" / "test.jsonl"
    files = multipart({"benchmark": "gsm8k"}, "test.jsonl", test_file.read_bytes())
    result = client.post(IMPORT, files=files).json()
    assert (result["version"], result["cases"]) == ("1.0.0", 1319)
    first = client.get("/api/datasets/gsm8k/versions/1.0.0/cases/gsm8k-0").json()
    assert first["expected"] == "18"
    again = client.post(IMPORT, files=files)
    assert (again.status_code, again.json()["created"]) == (200, False)
    train = (shared_data / "gsm8k" / "train.first300.jsonl").read_bytes()
    bump = {"benchmark": "gsm8k", "bump": "minor"}
    assert client.post(IMPORT, files=multipart(bump, "t.jsonl", train)).json()["version"] == "1.1.0"
    summary = client.get("/api/datasets/gsm8k/diff?base=1.0.0&candidate=1.1.0").json()["summary"]
    assert summary == {"added": 0, "removed": 1019, "changed": 300, "unchanged": 0}


def cli_import(database_url: str, home: Path, benchmark: str, path: Path) -> Any:
    """``benchbook import BENCHMARK --file PATH --json`` on the test database: its result."""
    env = {"BENCHBOOK_HOME": str(home), "DATABASE_URL": database_url}
    done = invoke(env, "import", benchmark, "--file", str(path), "--json")
    assert done.exit_code == 0, done.output
    return orjson.loads(done.stdout)


def test_an_uploaded_file_has_the_content_hash_of_the_cli_file_import(
    client: TestClient, database_url: str, shared_data: Path, tmp_path: Path
) -> None:
    test_file = shared_data / "gsm8k" / "test.jsonl"
    cli = cli_import(database_url, tmp_path / "cli-home", "gsm8k", test_file)
    files = multipart({"benchmark": "gsm8k"}, "test.jsonl", test_file.read_bytes())
    uploaded = client.post(IMPORT, files=files)
    assert uploaded.status_code == 200, uploaded.text  # identical: nothing new registered
    assert uploaded.json()["content_hash"] == cli["content_hash"]
    assert (uploaded.json()["version"], uploaded.json()["created"]) == ("1.0.0", False)


def task_file_parts(request: dict[str, Any], examples: Path, prefix: str) -> list[Any]:
    """``files=`` for TestClient: the ``request`` part and one ``file`` part per task file,
    named ``prefix`` + its path in the folder (as a browser sends a picked folder)."""
    parts: list[Any] = [("request", (None, orjson.dumps(request), "application/json"))]
    for path in sorted(examples.rglob("*.json")):
        name = prefix + path.relative_to(examples).as_posix()
        parts.append(("file", (name, path.read_bytes(), "application/json")))
    return parts


def test_osworlds_task_files_as_several_parts_import_as_the_cli_folder_import(
    client: TestClient, database_url: str, shared_data: Path, tmp_path: Path, upload_tmp: Path
) -> None:
    examples = shared_data / "osworld" / "examples"
    cli = cli_import(database_url, tmp_path / "cli-home", "osworld", examples)
    parts = task_file_parts(
        {"spec": {"id": "x", "source": {"kind": "file"}, "mapping": {"task_template": " "}}},
        examples,
        "examples/",
    )
    preview = client.post(PREVIEW, files=parts)
    assert preview.status_code == 200, preview.text
    assert [m["benchmark"] for m in preview.json()["catalog_matches"]] == ["osworld"]
    parts = task_file_parts({"benchmark": "osworld"}, examples, "examples/")
    uploaded = client.post(IMPORT, files=parts)
    assert uploaded.status_code == 200, uploaded.text
    assert (uploaded.json()["cases"], uploaded.json()["content_hash"]) == (369, cli["content_hash"])
    job = client.post("/api/imports", files=parts).json()
    for _ in range(600):
        job = client.get(f"/api/imports/{job['id']}").json()
        if job["state"] not in ("queued", "running"):
            break
        time.sleep(0.1)
    assert job["state"] == "succeeded", job["error"]
    assert job["result"]["content_hash"] == cli["content_hash"]
    assert list(upload_tmp.iterdir()) == []


def test_one_task_file_sent_as_a_folder_imports_as_the_cli_folder_import(
    client: TestClient, database_url: str, shared_data: Path, tmp_path: Path, upload_tmp: Path
) -> None:
    """A folder holding one task file: with ``folder=1`` its one part is read as that folder.
    Without it the part is a single file, and OSWorld's task object is refused as before."""
    task = sorted((shared_data / "osworld" / "examples" / "chrome").glob("*.json"))[0]
    folder = tmp_path / "picked" / "chrome"
    folder.mkdir(parents=True)
    (folder / task.name).write_bytes(task.read_bytes())
    cli = cli_import(database_url, tmp_path / "cli-home", "osworld", folder.parent)
    parts = task_file_parts({"benchmark": "osworld"}, folder.parent, "picked/")
    as_file = client.post(IMPORT, files=parts)
    assert as_file.status_code == 409, as_file.text
    assert "an object source must wrap exactly one list" in as_file.json()["message"]
    wrong = client.post(IMPORT, files=parts, data={"folder": "yes"})
    assert wrong.status_code == 400, wrong.text
    assert wrong.json()["message"] == "the 'folder' part must be 1 when sent"
    uploaded = client.post(IMPORT, files=parts, data={"folder": "1"})
    assert uploaded.status_code == 200, uploaded.text
    assert (uploaded.json()["cases"], uploaded.json()["content_hash"]) == (1, cli["content_hash"])
    assert list(upload_tmp.iterdir()) == []


def test_more_task_files_than_max_upload_files_is_413_and_leaves_nothing(
    engine: Engine, settings: Settings, shared_data: Path, upload_tmp: Path
) -> None:
    examples = shared_data / "osworld" / "examples" / "chrome"
    parts = task_file_parts({"benchmark": "osworld"}, examples, "chrome/")
    for client in make_client(settings.model_copy(update={"max_upload_files": 10})):
        response = client.post(IMPORT, files=parts)
        assert response.status_code == 413, response.text
        assert response.json()["code"] == "payload_too_large"
        assert "more than 10 files" in response.json()["message"]
        assert response.json()["details"]["max_upload_files"] == 10
        unsafe = task_file_parts({"benchmark": "osworld"}, examples, "../")[:3]
        refused = client.post(IMPORT, files=unsafe)
        assert refused.status_code == 400 and "unsafe path" in refused.json()["message"]
        assert listing(client) == {}
    assert list(upload_tmp.iterdir()) == []


def test_an_inline_spec_imports_with_its_own_mapping(client: TestClient) -> None:
    text = (
        '{"key": "a", "q": "Capital of France?", "a": "Paris"}\n{"key": "b", "q": "2+2?", "a": "4"}'
    )
    request = {"spec": inline_spec(homepage="https://example.org"), "text": text}
    assert client.post(IMPORT, json=request).status_code == 201
    case = client.get("/api/datasets/mini/versions/latest/cases/b").json()
    assert (case["task"], case["expected"]) == ("2+2?", "4")


def test_a_bad_row_is_a_409_naming_the_row_and_stores_nothing(
    client: TestClient, upload_tmp: Path
) -> None:
    client.post(IMPORT, json={"benchmark": "gsm8k", "text": gsm8k_text(2), "format": "jsonl"})
    before = listing(client)
    broken = gsm8k_text(3) + '{"question": "oops"\n'
    files = multipart({"benchmark": "gsm8k", "bump": "patch"}, "b.jsonl", broken.encode())
    response = client.post(IMPORT, files=files)
    assert response.status_code == 409
    assert response.json()["code"] == "conflict"
    assert "b.jsonl line 4" in response.json()["message"]
    assert response.json()["details"]["errors"][0]["row"] == 4
    assert listing(client) == before
    assert list(upload_tmp.iterdir()) == []


def test_a_javascript_origin_in_an_inline_spec_is_a_400(client: TestClient) -> None:
    request = {"spec": inline_spec(homepage="javascript:alert(1)"), "text": '{"q": "x"}'}
    response = client.post(IMPORT, json=request)
    assert response.status_code == 400
    paths = [e["path"] for e in response.json()["details"]["errors"]]
    assert "spec.origin.homepage" in paths
    assert listing(client) == {}


def test_malformed_requests_are_400(client: TestClient) -> None:
    assert client.post(IMPORT, content=b'{"benchmark": ').status_code == 400
    both = client.post(IMPORT, json={"benchmark": "gsm8k", "spec": inline_spec()})
    assert both.status_code == 400
    assert "exactly one" in both.json()["message"]
    version = {"benchmark": "gsm8k", "version": "v1", "text": "{}"}
    assert client.post(IMPORT, json=version).json()["details"]["errors"][0]["path"] == "version"
    no_request = client.post(IMPORT, files={"file": ("a.jsonl", b"{}", "text/plain")})
    assert no_request.status_code == 400
    assert "'request'" in no_request.json()["message"]
    two_files = {
        "request": (None, b'{"benchmark": "gsm8k"}', "application/json"),
        "file": ("a.jsonl", b"{}", "text/plain"),
        "other": ("b.jsonl", b"{}", "text/plain"),
    }
    assert client.post(IMPORT, files=two_files).status_code == 400
    cut = b'--xx\r\nContent-Disposition: form-data; name="file"; filename="a.jsonl"\r\n\r\n{"q"'
    truncated = client.post(
        IMPORT, content=cut, headers={"content-type": "multipart/form-data; boundary=xx"}
    )
    assert truncated.status_code == 400
    assert "closing boundary" in truncated.json()["message"]
    assert listing(client) == {}


def test_a_different_source_for_an_existing_version_is_a_409(client: TestClient) -> None:
    client.post(IMPORT, json={"benchmark": "gsm8k", "text": gsm8k_text(2), "format": "jsonl"})
    clash = {"benchmark": "gsm8k", "version": "1.0.0", "text": gsm8k_text(3), "format": "jsonl"}
    response = client.post(IMPORT, json=clash)
    assert response.status_code == 409
    assert "gsm8k@1.0.0" in response.json()["message"]


@pytest.fixture
def small_limit_client(engine: Engine, settings: Settings) -> Iterator[TestClient]:
    """The API with ``max_upload_bytes`` of 4 KiB."""
    yield from make_client(settings.model_copy(update={"max_upload_bytes": 4096}))


def test_an_upload_over_max_upload_bytes_is_413_and_leaves_no_file(
    small_limit_client: TestClient, upload_tmp: Path
) -> None:
    big = gsm8k_text(200).encode()
    files = multipart({"benchmark": "gsm8k"}, "big.jsonl", big)
    response = small_limit_client.post(IMPORT, files=files)
    assert response.status_code == 413
    assert response.json()["code"] == "payload_too_large"
    inline = {"benchmark": "gsm8k", "text": big.decode(), "format": "jsonl"}
    assert small_limit_client.post(IMPORT, json=inline).status_code == 413
    assert listing(small_limit_client) == {}
    assert list(upload_tmp.iterdir()) == []


GARBAGE_PARQUET = [b"", b"PAR1xxxxPAR1", bytes(range(256)) * 2]
PARQUET = {"format": "parquet"}


@pytest.mark.parametrize("route", [IMPORT, PREVIEW])
@pytest.mark.parametrize("data", GARBAGE_PARQUET, ids=["empty", "magic-only", "random"])
def test_a_corrupt_parquet_upload_is_a_409_naming_the_file(
    client: TestClient, upload_tmp: Path, route: str, data: bytes
) -> None:
    response = client.post(route, files=multipart({"benchmark": "gsm8k"}, "x.parquet", data))
    assert response.status_code == 409, response.text
    body = response.json()
    assert body["code"] == "conflict"
    assert body["message"].startswith("x.parquet: not a readable Parquet file")
    inline = client.post(route, json={"benchmark": "gsm8k", "text": "abc", "format": "parquet"})
    assert inline.status_code == 409, inline.text
    assert "not a readable Parquet file" in inline.json()["message"]
    assert listing(client) == {}
    assert list(upload_tmp.iterdir()) == []


def test_a_corrupt_parquet_import_job_fails_with_a_conflict(client: TestClient) -> None:
    started = client.post("/api/imports", json={"benchmark": "gsm8k", "text": "abc"} | PARQUET)
    assert started.status_code == 202, started.text
    job_id = started.json()["id"]
    for _ in range(400):
        job = client.get(f"/api/imports/{job_id}").json()
        if job["state"] in ("succeeded", "failed", "cancelled"):
            break
        time.sleep(0.05)
    assert job["state"] == "failed"
    assert job["error"]["code"] == "conflict"
    assert "not a readable Parquet file" in job["error"]["message"]
    assert listing(client) == {}


@pytest.mark.parametrize("route", [IMPORT, PREVIEW])
def test_an_empty_upload_or_text_is_a_409_and_registers_nothing(
    client: TestClient, upload_tmp: Path, route: str
) -> None:
    empty = client.post(route, files=multipart({"benchmark": "gsm8k"}, "rows.jsonl", b""))
    assert empty.status_code == 409, empty.text
    assert empty.json()["message"] == "rows.jsonl has no rows; nothing imported"
    for name in ("h.csv", "a.json"):
        data = b"question,answer\n" if name.endswith(".csv") else b"[]"
        response = client.post(route, files=multipart({"benchmark": "gsm8k"}, name, data))
        assert response.json()["message"] == f"{name} has no rows; nothing imported"
    text = client.post(route, json={"benchmark": "gsm8k", "text": "", "format": "jsonl"})
    assert text.status_code == 409
    assert text.json()["message"] == "upload.jsonl has no rows; nothing imported"
    assert listing(client) == {}
    assert list(upload_tmp.iterdir()) == []


def test_an_empty_upload_with_bump_patch_leaves_latest_alone(client: TestClient) -> None:
    client.post(IMPORT, json={"benchmark": "gsm8k", "text": gsm8k_text(2), "format": "jsonl"})
    before = listing(client)
    files = multipart({"benchmark": "gsm8k", "bump": "patch"}, "empty.jsonl", b"")
    assert client.post(IMPORT, files=files).status_code == 409
    assert listing(client) == before
    assert client.get("/api/datasets/gsm8k/versions/latest").json()["version"]["version"] == "1.0.0"


def test_a_file_only_benchmark_without_a_file_says_how_to_send_one_over_http(
    client: TestClient,
) -> None:
    for route in (IMPORT, PREVIEW):
        response = client.post(route, json={"benchmark": "osworld"})
        assert response.status_code == 409, response.text
        message = response.json()["message"]
        assert "upload it (multipart 'file' part) or pass its content as 'text'" in message
        assert "the CLI takes --file PATH" in message


def test_a_bad_upload_line_names_one_line_and_its_column(client: TestClient) -> None:
    rows = b'{"question": "q", "answer": "#### 1"}\n{x}\n'
    response = client.post(IMPORT, files=multipart({"benchmark": "gsm8k"}, "b.jsonl", rows))
    assert response.status_code == 409
    assert response.json()["message"].startswith("b.jsonl line 2, column 2: not valid JSON: ")
    latin = "question,answer\nsoupçon,#### 1\n".encode("latin-1")
    bad = client.post(IMPORT, files=multipart({"benchmark": "gsm8k"}, "l.csv", latin))
    assert bad.status_code == 409
    assert bad.json()["message"].startswith("l.csv line 2: not UTF-8 text: byte 0xe7 at column 5")
    assert listing(client) == {}


def one_line_bomb(size_bytes: int = 80 << 20) -> bytes:
    """~80 KB of gzip inflating to ``size_bytes`` on one JSONL line (no newline)."""
    return gzip.compress(b'{"q": "' + b"a" * size_bytes, compresslevel=6)


@pytest.mark.parametrize("route", [PREVIEW, IMPORT])
def test_a_gzip_bomb_on_one_line_is_413_naming_the_limit_and_the_server_lives_on(
    client: TestClient, upload_tmp: Path, route: str
) -> None:
    files = multipart({"spec": inline_spec()}, "bomb.jsonl.gz", one_line_bomb())
    started = time.monotonic()
    response = client.post(route, files=files)
    assert time.monotonic() - started < 20
    assert response.status_code == 413, response.text[:300]
    body = response.json()
    assert body["code"] == "payload_too_large"
    assert "bomb.jsonl.gz line 1" in body["message"]
    assert "BENCHBOOK_MAX_RECORD_BYTES" in body["message"]
    assert body["details"]["limit_bytes"] == 64 << 20
    assert client.get("/api/health").status_code == 200
    assert listing(client) == {}
    assert list(upload_tmp.iterdir()) == []


def test_json_documents_and_decompressed_totals_are_bounded_by_their_settings(
    engine: Engine, settings: Settings, upload_tmp: Path
) -> None:
    small = settings.model_copy(
        update={"max_document_bytes": 1 << 20, "max_decompressed_bytes": 2 << 20}
    )
    rows = [{"key": str(i), "q": "x" * 100, "a": "1"} for i in range(12_000)]  # ~1.5 MiB
    spec = inline_spec() | {"source": {"kind": "file", "format": "json"}}
    document = gzip.compress(orjson.dumps(rows))
    lines = gzip.compress(b"".join(orjson.dumps(r) + b"\n" for r in rows * 2))  # ~3 MiB
    for client in make_client(small):
        whole = client.post(PREVIEW, files=multipart({"spec": spec}, "rows.json.gz", document))
        assert whole.status_code == 413, whole.text[:300]
        assert "BENCHBOOK_MAX_DOCUMENT_BYTES" in whole.json()["message"]
        total = client.post(IMPORT, files=multipart({"spec": inline_spec()}, "r.jsonl.gz", lines))
        assert total.status_code == 413, total.text[:300]
        assert "BENCHBOOK_MAX_DECOMPRESSED_BYTES" in total.json()["message"]
        assert listing(client) == {}


@pytest.mark.parametrize(
    ("sent", "kept"),
    [
        ("a\x1b[31mb.jsonl", "a?[31mb.jsonl"),  # an ANSI colour escape
    ],
)
def test_an_uploads_name_is_recorded_without_control_characters(
    client: TestClient, upload_tmp: Path, sent: str, kept: str
) -> None:
    """A security trial stored ``a\\u0001\\u001bb.jsonl`` (terminal escapes) in a version's
    lineage as sent."""
    request = {"benchmark": "gsm8k", "id": "named"}
    response = client.post(IMPORT, files=multipart(request, sent, gsm8k_text(2).encode()))
    assert response.status_code == 201, response.text
    source = client.get("/api/datasets/named/versions/1.0.0").json()["version"]["produced_by"]
    assert source["source"]["file"] == kept
