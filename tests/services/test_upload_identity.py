"""An upload is recorded as ``--file`` of a file (or folder) with the same name (issue 14 items
1 and 4): the wizard's upload of the real GSM8K ``test.jsonl``, and of OSWorld's task files sent
as several files, give the content hash of ``benchbook import … --file``; unsafe or repeated
task file names are refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchbook.contracts.imports import ImportResult
from benchbook.datasets.sources.task_files import place_files
from benchbook.errors import InvalidInput
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


def _task_files(examples: Path, prefix: str) -> list[tuple[Path, str]]:
    """OSWorld's task files as a browser sends a picked folder: ``(path, prefix + relative)``,
    in the order a file list gives them (not sorted)."""
    paths = sorted(examples.rglob("*.json"), key=lambda p: p.stat().st_size)
    return [(p, prefix + p.relative_to(examples).as_posix()) for p in paths]


def test_several_osworld_task_files_import_as_the_folder_itself(
    ctx: Context, shared_data: Path, tmp_path: Path
) -> None:
    examples = shared_data / "osworld" / "examples"
    cli = _cli_import(ctx, "osworld", examples)
    saved = uploads.save_upload_files(ctx, _task_files(examples, "examples/"))
    assert saved.name == "examples.zip"
    uploads._CACHE.clear()  # a server that never saw the upload
    path, name = uploads.upload_path(ctx, saved.id)
    assert (name, len(list(path.rglob("*.json")))) == ("examples", 369)
    web = _web_import(ctx, "osworld", saved.id)
    assert (web.cases, web.created, web.content_hash) == (369, False, cli.content_hash)


def test_task_files_without_a_common_folder_read_as_a_folder_named_files(
    ctx: Context, shared_data: Path, tmp_path: Path
) -> None:
    chrome = shared_data / "osworld" / "examples" / "chrome"
    picked = sorted(chrome.glob("*.json"))[:5]
    loose = tmp_path / "files"
    loose.mkdir()
    for path in picked:
        (loose / path.name).write_bytes(path.read_bytes())
    cli = _cli_import(ctx, "osworld", loose)
    saved = uploads.save_upload_files(ctx, [(p, p.name) for p in picked])
    web = _web_import(ctx, "osworld", saved.id)
    assert (web.cases, web.created, web.content_hash) == (5, False, cli.content_hash)


@pytest.mark.parametrize(
    ("names", "message"),
    [
        (["a/x.json", "a/../../x.json"], r"entry 'a/\.\./\.\./x\.json' has an unsafe path"),
        (["/etc/x.json", "y.json"], "unsafe path"),
        (["a\\x.json", "y.json"], "unsafe path"),
        (["a/x.json", "a/x.json"], "two files are named 'x.json'"),
        (["x.json", ""], "without a name"),
    ],
)
def test_unsafe_or_repeated_task_file_names_are_refused_and_nothing_is_stored(
    ctx: Context, tmp_path: Path, names: list[str], message: str
) -> None:
    saved = tmp_path / "task.json"
    saved.write_text('{"id": "t"}')
    with pytest.raises(InvalidInput, match=message):
        uploads.save_upload_files(ctx, [(saved, n) for n in names])
    with pytest.raises(InvalidInput, match=message):
        place_files([(saved, n) for n in names], tmp_path / "out")
    assert not (tmp_path / "out").exists() and saved.exists()
