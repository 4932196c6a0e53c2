"""Import jobs through the service (SPEC E.5) against the local Hugging Face server, on SQLite
and PostgreSQL: progress, results, failures and cancellation that store nothing."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from benchbook.errors import Forbidden, NotFound
from benchbook.services import datasets as ds
from benchbook.services import imports
from benchbook.services import jobs as svc
from benchbook.services.context import Context, local_admin_context
from benchbook.settings import Settings
from benchbook.store.engine import make_engine
from tests.hfserver.catalog import GATED_ID, GSM8K_ID, PAGED_ID
from tests.hfserver.server import HfServer
from tests.services.test_accounts import make_team

ROWS = (
    '{"id": "a", "question": "1+1", "answer": "2"}\n{"id": "b", "question": "2+2", "answer": "4"}\n'
)
INLINE = {
    "id": "mini",
    "source": {"kind": "file", "format": "jsonl"},
    "mapping": {"id_field": "id", "task_field": "question", "answer_field": "answer"},
}


def hf_settings(settings: Settings, server: HfServer) -> Settings:
    """``settings`` pointed at the local Hugging Face server."""
    return settings.model_copy(
        update={"hf_endpoint": server.url, "hf_viewer_endpoint": server.viewer_url}
    )


@pytest.fixture
def hf_ctx(engine: Engine, settings: Settings, hf_server: HfServer) -> Context:
    """The local admin, reaching Hugging Face at the local server."""
    return local_admin_context(engine, hf_settings(settings, hf_server))


@contextmanager
def held_page(server: HfServer, offset: int) -> Iterator[tuple[threading.Event, threading.Event]]:
    """Hold the viewer's ``/rows`` answer at ``offset`` until ``release`` is set.

    Yields ``(reached, release)``; ``reached`` is set when the request arrives. The fake server
    routes through ``server.answer``, so wrapping it delays the real protocol answer.
    """
    reached, release = threading.Event(), threading.Event()
    original = server.answer

    def answer(method: str, raw_path: str, headers: Any) -> Any:
        if "/viewer/rows" in raw_path and f"offset={offset}&" in raw_path + "&":
            reached.set()
            release.wait(30)
        return original(method, raw_path, headers)

    server.answer = answer  # type: ignore[method-assign]
    try:
        yield reached, release
    finally:
        release.set()
        server.answer = original  # type: ignore[method-assign]


def hf_request(dataset: str, config: str, split: str, **fields: Any) -> Any:
    spec = {
        "id": fields.pop("id", "hf-bench"),
        "source": {"kind": "huggingface", "dataset": dataset, "config": config, "split": split},
        "mapping": {"task_field": "question", "answer_field": "answer"},
    }
    return imports.parse_import_request({"spec": spec, **fields})


def stored(ctx: Context) -> list[str]:
    """Every dataset id the caller can read back from the registry."""
    return [d.id for d in ds.list_datasets(ctx, limit=1000).items]


def test_a_job_imports_and_reports_its_result_and_progress(ctx: Context) -> None:
    request = imports.parse_import_request({"spec": INLINE, "text": ROWS, "format": "jsonl"})
    job = svc.start_import(ctx, request)
    assert job.state in ("queued", "running") and job.id.startswith("imp_")
    assert "text" not in job.request and job.request["spec"]["id"] == "mini"
    done = svc.wait_for_import(ctx, job.id, 30)
    assert done.state == "succeeded" and done.error is None
    assert done.result is not None and (done.result.id, done.result.cases) == ("mini", 2)
    assert (done.progress.rows_read, done.progress.cases_built) == (2, 2)
    assert done.created_by == ctx.principal.user_id and done.finished_at is not None
    assert stored(ctx) == ["mini"]
    assert [j.id for j in svc.list_imports(ctx)] == [job.id]


def test_a_failing_import_shows_the_error_envelope_and_stores_nothing(ctx: Context) -> None:
    broken = ROWS + '{"id": "c", "answer": "5"}\n'
    request = imports.parse_import_request({"spec": INLINE, "text": broken, "format": "jsonl"})
    done = svc.wait_for_import(ctx, svc.start_import(ctx, request).id, 30)
    assert done.state == "failed" and done.result is None
    assert (
        done.error is not None and done.error.code == "conflict"
    )  # what the source holds contradicts the mapping
    assert "row 3" in done.error.message and done.error.details["errors"][0]["row"] == 3
    assert stored(ctx) == []


def test_the_job_record_is_readable_from_another_engine(
    ctx: Context, database_url: str, settings: Settings
) -> None:
    request = imports.parse_import_request({"spec": INLINE, "text": ROWS, "format": "jsonl"})
    job = svc.wait_for_import(ctx, svc.start_import(ctx, request).id, 30)
    other = make_engine(database_url)  # what another process sees: the table, not memory
    try:
        seen = svc.get_import(local_admin_context(other, settings), job.id)
    finally:
        other.dispose()
    assert seen.state == "succeeded" and seen.result == job.result
    assert seen.progress == job.progress


def test_gsm8k_through_a_job_matches_the_direct_import(hf_ctx: Context) -> None:
    job = svc.start_import(hf_ctx, hf_request(GSM8K_ID, "main", "test", version="1.0.0"))
    done = svc.wait_for_import(hf_ctx, job.id, 60)
    assert done.state == "succeeded", done.error
    assert done.progress.rows_read == 1319 and done.progress.total == 1319
    direct = imports.import_benchmark(hf_ctx, hf_request(GSM8K_ID, "main", "test", version="2.0.0"))
    assert direct.cases == 1319 and done.result is not None
    diff = ds.diff_datasets(hf_ctx, "hf-bench", "1.0.0", "2.0.0")
    assert diff.summary.unchanged == 1319 and diff.meta == []
    source = ds.get_dataset(hf_ctx, "hf-bench", "1.0.0", limit=1).version.produced_by.source  # type: ignore[union-attr]
    assert source is not None
    assert (source.dataset, source.config, source.split) == (GSM8K_ID, "main", "test")
    assert source.revision is not None and len(source.revision) == 40


def test_the_250_row_split_with_a_short_page_imports_each_row_once(
    hf_ctx: Context, hf_server: HfServer
) -> None:
    request = hf_request(PAGED_ID, "default", "train", id="paged")
    request.spec.mapping.id_field = "id"  # type: ignore[union-attr]
    done = svc.wait_for_import(hf_ctx, svc.start_import(hf_ctx, request).id, 30)
    assert done.state == "succeeded", done.error
    assert done.result is not None and done.result.cases == 250
    ids = [c.id for c in ds.get_dataset(hf_ctx, "paged", limit=1000).cases]
    assert ids == [str(100 + i) for i in range(250)]
    assert [int(r.query["offset"]) for r in hf_server.calls("/viewer/rows")] == [0, 100, 160]


def test_cancelling_mid_import_stores_nothing(hf_ctx: Context, hf_server: HfServer) -> None:
    with held_page(hf_server, 1100) as (reached, release):
        job = svc.start_import(hf_ctx, hf_request(GSM8K_ID, "main", "test"))
        assert reached.wait(30), "the import never asked for the page at offset 1100"
        running = svc.get_import(hf_ctx, job.id)
        assert running.state == "running" and running.progress.rows_read >= 1000
        asked = svc.cancel_import(hf_ctx, job.id)
        assert asked.cancel_requested and asked.state == "running"
        release.set()
        done = svc.wait_for_import(hf_ctx, job.id, 30)
    assert done.state == "cancelled" and done.error is not None
    assert done.error.code == "cancelled" and done.result is None
    assert 1000 <= done.progress.rows_read <= 1319
    assert stored(hf_ctx) == []
    with pytest.raises(NotFound):
        ds.list_dataset_versions(hf_ctx, "hf-bench")
    again = svc.cancel_import(hf_ctx, job.id)  # finished: returned unchanged
    assert again.state == "cancelled" and again.finished_at == done.finished_at


def test_a_job_cancelled_while_queued_never_runs(hf_ctx: Context, hf_server: HfServer) -> None:
    with held_page(hf_server, 0) as (reached, release):
        first = svc.start_import(hf_ctx, hf_request(PAGED_ID, "default", "train", id="first"))
        assert reached.wait(30)
        workers = svc.MAX_IMPORT_WORKERS if hf_ctx.engine.dialect.name != "sqlite" else 1
        queued = [
            svc.start_import(hf_ctx, hf_request(PAGED_ID, "default", "test", id=f"q{i}"))
            for i in range(workers)
        ]  # the first of these waits behind the held import in every pool size
        last = queued[-1]
        assert svc.get_import(hf_ctx, last.id).state == "queued"
        assert svc.cancel_import(hf_ctx, last.id).cancel_requested
        release.set()
        for job in (first, *queued):
            svc.wait_for_import(hf_ctx, job.id, 30)
    final = svc.get_import(hf_ctx, last.id)
    assert final.state == "cancelled" and final.started_at is None
    assert "q" + str(workers - 1) not in stored(hf_ctx)
    assert svc.get_import(hf_ctx, first.id).state == "succeeded"


def test_a_gated_dataset_without_a_token_fails_with_the_actionable_message(
    hf_ctx: Context,
) -> None:
    request = hf_request(GATED_ID, "default", "validation", id="gated")
    request.spec.mapping.task_field = "Question"  # type: ignore[union-attr]
    done = svc.wait_for_import(hf_ctx, svc.start_import(hf_ctx, request).id, 30)
    assert done.state == "failed" and done.error is not None
    assert done.error.code == "upstream_error" and "HF_TOKEN" in done.error.message
    assert stored(hf_ctx) == []


def test_jobs_of_another_workspace_are_not_found_and_roles_gate_them(ctx: Context) -> None:
    team = make_team(ctx)
    request = imports.parse_import_request({"spec": INLINE, "text": ROWS, "format": "jsonl"})
    with pytest.raises(Forbidden):
        svc.start_import(team.viewer, request)
    job = svc.wait_for_import(team.member, svc.start_import(team.member, request).id, 30)
    assert svc.get_import(team.viewer, job.id).state == "succeeded"
    for outsider_call in (svc.get_import, svc.cancel_import):
        with pytest.raises(NotFound):
            outsider_call(team.outsider, job.id)
    with pytest.raises(Forbidden):
        svc.cancel_import(team.member2, job.id)  # another member's job
    assert svc.cancel_import(team.admin, job.id).state == "succeeded"
    assert svc.list_imports(team.outsider) == []


def test_an_uploaded_file_owned_by_the_job_is_deleted_when_it_finishes(
    ctx: Context, tmp_path: Path
) -> None:
    upload = tmp_path / "upload.jsonl"
    upload.write_text(ROWS, encoding="utf-8")
    request = imports.parse_import_request({"spec": INLINE})
    job = svc.start_import(ctx, request, upload, "rows.jsonl", own_file=True)
    assert not upload.exists()  # moved out of the request's way at once
    done = svc.wait_for_import(ctx, job.id, 30)
    assert done.state == "succeeded" and done.file_name == "rows.jsonl"
    assert list(tmp_path.glob("benchbook-job-*")) == []
