"""The JSONL export over HTTP (issue 15, item 4): byte for byte the canonical case bodies, in
version order, streamed from a read-ahead thread that lets go of its database connection when
the client leaves. Against a real uvicorn server, on SQLite and PostgreSQL."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from sqlalchemy import Engine

from benchbook.contracts import Dataset
from benchbook.datasets.identity import case_body
from benchbook.services import datasets as svc
from benchbook.services.context import Context
from benchbook.settings import Settings
from tests.mcp.live import live_server

pytestmark = pytest.mark.both_backends

# ~1 KB bodies: 700 of them span several 256 KiB chunks of the HTTP export.
N_CASES = 700
FILLER = 'Sums of ünïcode, "quotes", back\\slashes and\nnew lines; ' * 16


def _dataset(version: str, order: list[int], filler: str = FILLER) -> Dataset:
    cases: list[dict[str, Any]] = [
        {"id": f"c{i}", "env": {"kind": "prompt"}, "task": f"{i}: {filler}", "expected": i}
        for i in order
    ]
    return Dataset.model_validate({"id": "big", "version": version, "cases": cases})


@pytest.fixture
def server(engine: Engine, settings: Settings) -> Iterator[str]:
    with live_server(settings, engine) as url:
        yield url


def _export(url: str, version: str) -> bytes:
    with httpx.Client(base_url=url, timeout=60) as http:
        got = http.get(f"/api/datasets/big/versions/{version}/cases.jsonl")
    assert got.status_code == 200, got.text
    assert got.headers["content-type"].startswith("application/x-ndjson")
    return got.content


def test_an_http_export_is_the_canonical_bodies_byte_for_byte(server: str, ctx: Context) -> None:
    forward = _dataset("1.0.0", list(range(N_CASES)))
    # The same bodies again in reverse order: their stored ids now run against the positions.
    backward = _dataset("2.0.0", list(reversed(range(N_CASES))))
    svc.register_dataset(ctx, forward)
    svc.register_dataset(ctx, backward)
    for dataset in (forward, backward):
        expected = b"".join(case_body(c) + b"\n" for c in dataset.cases)
        assert _export(server, dataset.version) == expected
        assert b"".join(svc.export_dataset(ctx, "big", dataset.version)) == expected


def test_an_export_after_a_position_resumes_there_and_a_bad_cursor_is_refused(
    server: str, ctx: Context
) -> None:
    # The reversed order: positions run against the stored body ids, so "after" is positional.
    dataset = _dataset("2.0.0", list(reversed(range(N_CASES))))
    svc.register_dataset(ctx, dataset)
    lines = [case_body(c) + b"\n" for c in dataset.cases]
    with httpx.Client(base_url=server, timeout=60) as http:
        path = "/api/datasets/big/versions/2.0.0/cases.jsonl"
        for after, rest in ((0, lines[1:]), (N_CASES - 2, lines[-1:]), (N_CASES - 1, [])):
            got = http.get(path, params={"after": after})
            assert got.status_code == 200 and got.content == b"".join(rest), after
        assert http.get(path, params={"after": -1}).status_code in (400, 422)
        assert http.get(path, params={"after": 2**63}).status_code in (400, 422)
    chunks = svc.export_dataset_chunks(ctx, "big", "2.0.0", 4096, after=N_CASES - 3)
    assert b"".join(chunks) == b"".join(lines[-2:])


def test_a_client_that_leaves_mid_export_gives_its_connection_back(
    server: str, ctx: Context, engine: Engine
) -> None:
    # 2,000 bodies of ~10 KB: 20 MB, more than the sockets buffer, so the server is mid-stream.
    svc.register_dataset(ctx, _dataset("1.0.0", list(range(2000)), FILLER * 10))
    with (
        httpx.Client(base_url=server, timeout=60) as http,
        http.stream("GET", "/api/datasets/big/versions/1.0.0/cases.jsonl") as response,
    ):
        first = next(response.iter_raw())
        assert first.startswith(b'{"env":')
    deadline = time.monotonic() + 10
    while engine.pool.checkedout() and time.monotonic() < deadline:  # type: ignore[attr-defined]
        time.sleep(0.05)
    assert engine.pool.checkedout() == 0  # type: ignore[attr-defined]
    assert _export(server, "1.0.0").count(b"\n") == 2000  # and the next export runs
