"""An upload is recorded as ``--file`` of a file (or folder) with the same name (issue 14 items
1 and 4): the wizard's upload of the real GSM8K ``test.jsonl`` and of OSWorld's task files as
several files give the content hash of ``benchbook import … --file``."""

from __future__ import annotations

from pathlib import Path

from benchbook.contracts.imports import ImportResult
from benchbook.services import datasets as ds
from benchbook.services import imports, jobs, uploads
from benchbook.services.context import Context


def _cli_import(ctx: Context, benchmark: str, path: Path) -> ImportResult:
    """What ``benchbook import BENCHMARK --file PATH`` runs."""
    return imports.import_benchmark(
        ctx, imports.parse_import_request({"benchmark": benchmark}), path
    )


def _web_import(ctx: Context, benchmark: str, upload_id: str) -> ImportResult:
    """What the wizard's Import button runs for an upload (a job)."""
    request = imports.parse_import_request({"benchmark": benchmark})
    job = uploads.start_import_from_upload(ctx, request, upload_id)
    done = jobs.wait_for_import(ctx, job.id, 120)
    assert done.state == "succeeded" and done.result is not None, done.error
    return done.result


def test_an_uploaded_gsm8k_file_has_the_content_hash_of_the_cli_file_import(
    ctx: Context, shared_data: Path
) -> None:
    test_file = shared_data / "gsm8k" / "test.jsonl"
    cli = _cli_import(ctx, "gsm8k", test_file)
    with test_file.open("rb") as f:
        saved = uploads.save_upload(ctx, f, "test.jsonl")
    web = _web_import(ctx, "gsm8k", saved.id)
    assert (web.version, web.cases, web.created) == ("1.0.0", 1319, False)
    assert web.content_hash == cli.content_hash
    lineage = ds.get_dataset(ctx, "gsm8k", limit=1).version
    assert lineage.produced_by is not None and lineage.produced_by.source is not None
    assert (lineage.produced_by.source.kind, lineage.produced_by.source.file) == (
        "file",
        "test.jsonl",
    )
    assert lineage.description is not None
    assert lineage.description.endswith("This version: file test.jsonl.")
