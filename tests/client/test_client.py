"""``benchbook.client`` against a real ``benchbook serve`` on SQLite and PostgreSQL (issue 16):
list, read (keyset pages), register, versions, diff, export (JSONL, Hugging Face directory,
Parquet), import jobs with progress, the error classes by credential, and the async client."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest

from benchbook.client import (
    AsyncClient,
    Client,
    Conflict,
    InvalidInput,
    NotFound,
    Unauthenticated,
)
from benchbook.contracts import Case
from benchbook.datasets.flat import flat_row
from tests.client.conftest import V1, Live, case
from tests.conftest import import_or_need


def test_list_get_versions_and_cases_over_keyset_pages(bb: Client) -> None:
    page = bb.datasets.list(search="arith")
    assert [d.id for d in page.items] == ["arith"] and page.total == 1
    view = bb.datasets.get("arith@1.0.0", limit=2)
    assert [c.id for c in view.cases] == ["a", "b"] and view.next_after == 1
    assert [v.version for v in bb.datasets.versions("arith")] == ["1.1.0", "1.0.0"]
    # page_size 2 over 6 cases: three pages, pinned to the version of the first one
    cases = list(bb.cases("arith", page_size=2))
    assert [c.id for c in cases] == ["a", "b", "c", "d", "e", "f"]
    assert all(isinstance(c, Case) for c in cases) and cases[4].expected == 11
    assert bb.datasets.case("arith@1.0.0", "c").metadata["work"] == "3+3=6"


def test_register_again_is_unchanged_and_other_content_conflicts(bb: Client) -> None:
    assert not bb.datasets.register(V1).created
    changed = {**V1, "cases": [case("a", "1+1?", 3)]}
    with pytest.raises(Conflict) as err:
        bb.datasets.register(changed)
    assert err.value.code == "conflict" and err.value.details["version"] == "1.0.0"
    with pytest.raises(InvalidInput) as bad:
        bb.datasets.register({"id": "arith", "version": "nope", "cases": []})
    assert any(e["path"] == "version" for e in bad.value.details["errors"])


def test_diff(bb: Client) -> None:
    diff = bb.datasets.diff("arith", "1.0.0", "1.1.0")
    assert diff.summary.added == 1 and diff.summary.changed == 1 and diff.summary.removed == 0
    assert [c.id for c in diff.added] == ["f"]


def test_export_jsonl_is_the_servers_stream(bb: Client, live: Live, tmp_path: Path) -> None:
    out = tmp_path / "arith.jsonl"
    assert bb.datasets.export("arith@1.0.0", out) == 5
    served = httpx.get(
        f"{live.url}/api/datasets/arith/versions/1.0.0/cases.jsonl",
        headers={"authorization": f"Bearer {live.admin_key}"},
    ).content
    assert out.read_bytes() == served


def test_export_directories_load_with_datasets_as_they_are(bb: Client, tmp_path: Path) -> None:
    datasets = import_or_need("datasets")
    rows = [flat_row(c) for c in bb.cases("arith@1.0.0")]
    assert rows[2]["metadata"] == '{"source":"x"}'  # gold metadata stays out
    assert [r["target"] for r in rows] == ["2", "4", "6", "8", "10"]
    for fmt in ("hf", "parquet"):
        out = tmp_path / fmt
        assert bb.datasets.export("arith@1.0.0", out, fmt) == 5
        loaded = datasets.load_dataset(str(out), cache_dir=str(tmp_path / "cache"))
        assert list(loaded) == ["test"]
        assert loaded["test"].to_list() == rows
    with pytest.raises(InvalidInput, match="not an empty directory"):
        bb.datasets.export("arith@1.0.0", tmp_path / "hf", "hf")


def test_hf_dataset_adapter(bb: Client) -> None:
    import_or_need("datasets")
    from benchbook.client import to_hf_dataset

    ds = to_hf_dataset("arith@1.1.0", bb)
    assert ds.num_rows == 6 and ds[5] == flat_row(bb.datasets.case("arith@1.1.0", "f"))


def test_a_revoked_key_is_unauthenticated(live: Live) -> None:
    key, key_id = live.mint_key("soon revoked")
    client = live.client(key)
    assert client.datasets.list().total >= 0
    live.revoke(key_id)
    with pytest.raises(Unauthenticated) as err:
        client.datasets.list()
    assert err.value.code == "unauthenticated"
    with pytest.raises(Unauthenticated):
        live.client("bb_not_a_key").datasets.get("arith")


def test_another_workspaces_dataset_is_not_found(bb: Client, live: Live) -> None:
    other = live.client(live.other_key)
    other.datasets.register({**V1, "id": "private-arith"})
    assert other.datasets.get("private-arith").version.workspace == "other"
    with pytest.raises(NotFound) as err:
        bb.datasets.get("private-arith@1.0.0")
    assert err.value.code == "not_found" and err.value.http_status == 404
    with pytest.raises(NotFound):
        list(bb.cases("private-arith"))
    with pytest.raises(NotFound):
        other.datasets.versions("arith")


def test_import_job_reports_progress(bb: Client) -> None:
    rows = "".join(
        json.dumps({"question": f"{i}+{i}?", "answer": f"#### {2 * i}"}) + "\n" for i in range(30)
    )
    seen: list[str] = []
    job = bb.imports.run(
        {"benchmark": "gsm8k", "id": "tiny-gsm", "version": "1.0.0", "text": rows},
        progress=lambda j: seen.append(j.state),
    )
    assert job.state == "succeeded" and job.result is not None and job.result.cases == 30
    assert seen[-1] == "succeeded"
    with pytest.raises(Conflict):  # same version, other content: the job's error, as its class
        bb.imports.run(
            {"benchmark": "gsm8k", "id": "tiny-gsm", "version": "1.0.0", "text": rows[:40]}
        )


def test_async_client_reads_the_same(bb: Client, live: Live, tmp_path: Path) -> None:
    async def read() -> tuple[list[str], int, list[str]]:
        async with AsyncClient(live.url, live.admin_key) as client:
            ids = [c.id async for c in client.cases("arith@1.1.0", page_size=4)]
            n = await client.datasets.export("arith@1.0.0", tmp_path / "a.jsonl")
            versions = [v.version for v in await client.datasets.versions("arith")]
            return ids, n, versions

    ids, n, versions = asyncio.run(read())
    assert ids == ["a", "b", "c", "d", "e", "f"] and n == 5 and versions == ["1.1.0", "1.0.0"]
