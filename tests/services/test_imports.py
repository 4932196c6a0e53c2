"""Benchmark imports through the service (SPEC E), on SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from benchbook.contracts import Dataset
from benchbook.contracts.imports import ImportProgress, ImportRequest
from benchbook.errors import Conflict, InvalidInput
from benchbook.eval.graders import check_grader_ids
from benchbook.services import datasets as ds
from benchbook.services import imports as svc
from benchbook.services.context import Context


def _req(**fields: Any) -> ImportRequest:
    return svc.parse_import_request(fields)


def _registry(ctx: Context) -> list[tuple[str, str, int]]:
    page = ds.list_datasets(ctx, limit=1000)
    return [(d.id, d.latest, d.cases) for d in page.items]


def test_each_imported_version_says_what_it_holds(ctx: Context, shared_data: Path) -> None:
    train = shared_data / "gsm8k" / "train.first300.jsonl"
    svc.import_benchmark(ctx, _req(benchmark="gsm8k", id="gsm8k-train"), train)
    held = ds.get_dataset(ctx, "gsm8k-train", "latest", limit=1).version.description or ""
    assert held.startswith("Grade-school math word problems.")
    assert held.endswith("This version: file train.first300.jsonl.")
    assert "1,319" not in held
    svc.import_benchmark(ctx, _req(benchmark="gsm8k", id="gsm8k-few", limit=5), train)
    few = ds.get_dataset(ctx, "gsm8k-few", "latest", limit=1).version.description or ""
    assert few.endswith("This version: the first 5 rows of file train.first300.jsonl.")
    svc.import_benchmark(ctx, _req(benchmark="osworld"), shared_data / "osworld" / "examples")
    desktop = ds.get_dataset(ctx, "osworld", "latest", limit=1).version.description or ""
    assert desktop.endswith("This version: 369 rows of file examples.")


def test_gsm8k_imports_then_is_unchanged_then_bumps_and_diffs(
    ctx: Context, shared_data: Path
) -> None:
    test_file = shared_data / "gsm8k" / "test.jsonl"
    seen: list[ImportProgress] = []
    first = svc.import_benchmark(ctx, _req(benchmark="gsm8k"), test_file, seen.append)
    assert (first.id, first.version, first.cases, first.created) == ("gsm8k", "1.0.0", 1319, True)
    assert seen[-1].rows_read == 1319 and seen[-1].cases_built == 1319
    view = ds.get_dataset(ctx, "gsm8k", "1.0.0", limit=2)
    assert view.cases[0].expected == "18"
    assert [c.id for c in view.cases] == ["gsm8k-0", "gsm8k-1"]
    lineage = view.version.produced_by
    assert lineage is not None and lineage.via == "catalog" and lineage.id == "gsm8k"
    assert lineage.source is not None and lineage.source.file == "test.jsonl"
    assert lineage.source.sha256 and len(lineage.source.sha256) == 64
    assert lineage.scoring is not None and lineage.scoring.kind == "official"
    assert lineage.origin is not None and lineage.origin.paper

    again = svc.import_benchmark(ctx, _req(benchmark="gsm8k"), test_file)
    assert (again.version, again.created) == ("1.0.0", False)

    train = shared_data / "gsm8k" / "train.first300.jsonl"
    bumped = svc.import_benchmark(ctx, _req(benchmark="gsm8k", bump="minor"), train)
    assert (bumped.version, bumped.cases, bumped.created) == ("1.1.0", 300, True)
    diff = ds.diff_datasets(ctx, "gsm8k", "1.0.0", "1.1.0")
    assert (diff.summary.changed, diff.summary.removed, diff.summary.added) == (300, 1019, 0)


def test_different_content_at_the_same_version_is_a_conflict(
    ctx: Context, shared_data: Path
) -> None:
    svc.import_benchmark(ctx, _req(benchmark="gsm8k"), shared_data / "gsm8k" / "test.jsonl")
    with pytest.raises(Conflict, match=r"gsm8k@1\.0\.0"):
        svc.import_benchmark(
            ctx, _req(benchmark="gsm8k"), shared_data / "gsm8k" / "train.first300.jsonl"
        )


def test_webvoyager_imports_browser_cases_with_start_urls(ctx: Context, shared_data: Path) -> None:
    path = shared_data / "webvoyager" / "WebVoyager_data.jsonl"
    result = svc.import_benchmark(ctx, _req(benchmark="webvoyager"), path)
    assert result.cases == 643
    case = ds.get_case(ctx, "webvoyager", "1.0.0", "Cambridge Dictionary--29")
    assert case.env.kind == "browser" and case.env.start_url  # type: ignore[union-attr]
    assert case.env.start_url.startswith("https://")  # type: ignore[union-attr]
    assert case.tags == ["Cambridge Dictionary"]


def test_trek_keeps_every_column_in_metadata(ctx: Context, shared_data: Path) -> None:
    path = shared_data / "trek" / "trek_queries.first50.csv"
    header = path.read_text(encoding="utf-8").splitlines()[0].split(",")
    result = svc.import_benchmark(ctx, _req(benchmark="trek"), path)
    assert result.cases == 50
    view = ds.get_dataset(ctx, "trek", limit=50)
    assert all(set(c.metadata) == set(header) for c in view.cases)
    assert view.version.produced_by.scoring.kind == "proxy"  # type: ignore[union-attr]


def test_osworld_imports_all_369_tasks_from_a_folder(ctx: Context, shared_data: Path) -> None:
    result = svc.import_benchmark(ctx, _req(benchmark="osworld"), shared_data / "osworld/examples")
    assert result.cases == 369
    ids = [c.id for c in ds.get_dataset(ctx, "osworld", limit=1000).cases]
    assert len(set(ids)) == 369
    assert sum(i.startswith(("chrome/", "thunderbird/")) for i in ids) == 22
    case = ds.get_case(ctx, "osworld", "1.0.0", ids[0])
    assert case.env.kind == "os-use" and "evaluator" in case.gold_fields


def test_limit_and_explicit_version_and_other_id(ctx: Context, shared_data: Path) -> None:
    request = _req(benchmark="gsm8k", id="gsm-small", version="0.1.0", limit=10)
    result = svc.import_benchmark(ctx, request, shared_data / "gsm8k" / "test.jsonl")
    assert (result.id, result.version, result.cases) == ("gsm-small", "0.1.0", 10)
    assert ds.get_dataset(ctx, "gsm-small").cases[0].id == "gsm-small-0"


SPEC = {
    "id": "mini",
    "source": {"kind": "file", "format": "jsonl"},
    "mapping": {"id_field": "id", "task_template": "Q: {question}", "answer_field": "answer"},
}


def test_an_inline_spec_imports_uploaded_text(ctx: Context) -> None:
    text = (
        '{"id": "a", "question": "1+1", "answer": "2"}\n'
        '{"id": "b", "question": "2+2", "answer": "4"}'
    )
    result = svc.import_benchmark(ctx, _req(spec=SPEC, text=text, format="jsonl"))
    assert (result.id, result.cases) == ("mini", 2)
    view = ds.get_dataset(ctx, "mini")
    assert view.cases[1].task == "Q: 2+2" and view.cases[1].expected == "4"
    lineage = view.version.produced_by
    assert lineage is not None and lineage.via == "spec" and lineage.source is not None
    assert (lineage.source.kind, lineage.source.file) == ("file", "upload.jsonl")


def _rejected(ctx: Context, request: dict[str, Any], text: str, match: str) -> InvalidInput:
    with pytest.raises(InvalidInput, match=match) as info:
        svc.import_benchmark(ctx, _req(**request, text=text))
    assert _registry(ctx) == []
    return info.value


def test_a_malformed_jsonl_row_names_the_line_and_stores_nothing(ctx: Context) -> None:
    text = '{"id": "a", "question": "q", "answer": "1"}\n{"id": "b", "question": \n'
    error = _rejected(ctx, {"spec": SPEC, "format": "jsonl"}, text, "line 2")
    assert error.details["errors"][0]["row"] == 2


def test_a_malformed_csv_row_names_the_line_and_stores_nothing(ctx: Context) -> None:
    spec = {**SPEC, "source": {"kind": "file", "format": "csv"}}
    text = "id,question,answer\na,q,1\nb,q\n"
    _rejected(ctx, {"spec": spec, "format": "csv"}, text, "line 3")


def test_an_unknown_template_field_names_field_and_row(ctx: Context) -> None:
    spec = {**SPEC, "mapping": {**SPEC["mapping"], "task_template": "{questoin}"}}
    text = '{"id": "a", "question": "q", "answer": "1"}'
    _rejected(ctx, {"spec": spec, "format": "jsonl"}, text, "row 1: field 'questoin' is missing")


def test_a_duplicate_case_id_is_listed_and_nothing_stored(ctx: Context) -> None:
    text = (
        '{"id": "a", "question": "q", "answer": "1"}\n{"id": "a", "question": "r", "answer": "2"}'
    )
    _rejected(ctx, {"spec": SPEC, "format": "jsonl"}, text, "'a' on lines 1 and 2")


def test_a_non_semver_version_is_rejected(ctx: Context) -> None:
    with pytest.raises(InvalidInput, match="version"):
        _req(spec=SPEC, version="v1", text="{}")
    assert _registry(ctx) == []


def test_a_javascript_origin_link_in_an_inline_spec_is_rejected(ctx: Context) -> None:
    spec = {**SPEC, "origin": {"homepage": "javascript:alert(1)"}}
    with pytest.raises(InvalidInput) as info:
        _req(spec=spec, text='{"id": "a", "question": "q", "answer": "1"}')
    assert "spec.origin.homepage" in info.value.message
    assert _registry(ctx) == []


def test_exactly_one_of_spec_recipe_or_benchmark(ctx: Context) -> None:
    with pytest.raises(InvalidInput, match="exactly one"):
        _req(spec=SPEC, benchmark="gsm8k")
    with pytest.raises(InvalidInput, match="exactly one"):
        _req(id="x")


def test_a_file_benchmark_without_a_file_asks_for_one_on_every_transport(ctx: Context) -> None:
    for benchmark in ("webvoyager", "osworld"):
        with pytest.raises(InvalidInput) as info:
            svc.import_benchmark(ctx, _req(benchmark=benchmark))
        message = info.value.message
        assert "upload it (multipart 'file' part)" in message
        assert "pass its content as 'text'" in message
        assert "the CLI takes --file PATH" in message
        assert not message.endswith("use --file PATH")
    assert _registry(ctx) == []


def test_preview_shows_fields_guesses_cases_and_writes_nothing(
    ctx: Context, shared_data: Path
) -> None:
    path = shared_data / "gsm8k" / "test.jsonl"
    result = svc.preview_benchmark_source(ctx, _req(benchmark="gsm8k", limit=3), path)
    assert result.fields == ["question", "answer"]
    assert len(result.rows) == 3 and len(result.cases) == 3
    assert result.cases[0]["expected"] == "18"
    assert result.mapping_guess["task_field"] == "question"
    assert result.assertion.startswith("The agent answers each row's `question`")
    assert _registry(ctx) == []


def test_preview_lists_failing_rows_as_warnings(ctx: Context) -> None:
    text = '{"id": "a", "question": "q", "answer": "1"}\n{"id": "b", "answer": "2"}'
    spec = {**SPEC, "mapping": {**SPEC["mapping"], "task_template": "{question}"}}
    result = svc.preview_benchmark_source(ctx, _req(spec=spec, text=text, format="jsonl"))
    assert result.warnings == ["row 2: field 'question' is missing; the row has 'id', 'answer'"]


def test_list_benchmarks_has_the_catalog(ctx: Context) -> None:
    ids = {b.id for b in svc.list_benchmarks(ctx)}
    assert {"gsm8k", "webvoyager", "trek", "osworld", "swe-bench-verified"} <= ids


CSV_SPEC = {**SPEC, "source": {"kind": "file", "format": "csv"}}


@pytest.mark.parametrize(
    ("request_fields", "text", "name"),
    [
        ({"spec": SPEC, "format": "jsonl"}, "", "upload.jsonl"),
        ({"spec": SPEC, "format": "jsonl"}, "\n \n\n", "upload.jsonl"),
        ({"spec": CSV_SPEC, "format": "csv"}, "", "upload.csv"),
        ({"spec": CSV_SPEC, "format": "csv"}, "id,question,answer\n", "upload.csv"),
        ({"spec": SPEC, "format": "json"}, "[]", "upload.json"),
        ({"spec": SPEC, "format": "json"}, "", "upload.json"),
        ({"spec": SPEC, "format": "json"}, '{"rows": []}', "upload.json"),
    ],
    ids=["empty-jsonl", "blank-lines", "empty-csv", "header-only", "[]", "empty-json", "{[]}"],
)
def test_an_import_that_reads_no_rows_is_rejected_and_stores_nothing(
    ctx: Context, request_fields: dict[str, Any], text: str, name: str
) -> None:
    error = _rejected(ctx, request_fields, text, f"^{name} has no rows; nothing imported$")
    assert error.details["errors"] == [{"path": name, "message": "no rows"}]
    with pytest.raises(InvalidInput, match="has no rows"):
        svc.preview_benchmark_source(ctx, _req(**request_fields, text=text))


def test_an_empty_file_does_not_become_the_next_patch_version(ctx: Context, tmp_path: Path) -> None:
    svc.import_benchmark(ctx, _req(benchmark="gsm8k", text='{"question": "q", "answer": "#### 1"}'))
    for name in ("empty.jsonl", "empty.csv", "empty.json", "empty.parquet"):
        path = tmp_path / name
        path.write_bytes(b"")
        with pytest.raises(InvalidInput, match=rf"^{name}: not a readable|^{name} has no rows"):
            svc.import_benchmark(ctx, _req(benchmark="gsm8k", bump="patch"), path)
    assert _registry(ctx) == [("gsm8k", "1.0.0", 1)]
    assert [v.version for v in ds.list_dataset_versions(ctx, "gsm8k")] == ["1.0.0"]


def test_registering_an_explicitly_empty_dataset_stays_allowed(ctx: Context) -> None:
    empty = Dataset.model_validate({"id": "empty", "version": "1.0.0", "cases": []})
    result = ds.register_dataset(ctx, empty)
    assert (result.cases, result.created) == (0, True)
    assert _registry(ctx) == [("empty", "1.0.0", 0)]


@pytest.mark.parametrize("data", [b"", b"PAR1xxxxPAR1", bytes(range(256))])
def test_a_corrupt_parquet_file_is_invalid_input_for_import_and_preview(
    ctx: Context, tmp_path: Path, data: bytes
) -> None:
    path = tmp_path / "x.parquet"
    path.write_bytes(data)
    with pytest.raises(InvalidInput, match=r"^x\.parquet: not a readable Parquet file"):
        svc.import_benchmark(ctx, _req(benchmark="gsm8k"), path)
    with pytest.raises(InvalidInput, match=r"^x\.parquet: not a readable Parquet file"):
        svc.preview_benchmark_source(ctx, _req(benchmark="gsm8k"), path)
    _rejected(ctx, {"benchmark": "gsm8k", "format": "parquet"}, "abc", "not a readable Parquet")
    assert _registry(ctx) == []


def test_a_non_utf8_file_names_its_line_and_byte_and_stores_nothing(
    ctx: Context, tmp_path: Path
) -> None:
    path = tmp_path / "latin1.csv"
    path.write_bytes("question,answer\nq,#### 1\ncafé,#### 2\n".encode("latin-1"))
    with pytest.raises(InvalidInput) as info:
        svc.import_benchmark(ctx, _req(benchmark="gsm8k"), path)
    message = info.value.message
    assert message.startswith("latin1.csv line 3: not UTF-8 text: byte 0xe9 at column 4")
    assert "byte offset 28" in message and "UTF-8 encoded" in message
    assert _registry(ctx) == []


def test_a_semicolon_csv_lists_the_columns_found_and_hints_at_the_delimiter(
    ctx: Context,
) -> None:
    text = "id;question;answer\na;q;1\n"
    error = _rejected(ctx, {"spec": CSV_SPEC, "format": "csv"}, text, "^row 2: field ")
    message = error.message
    assert "the row has 'id;question;answer'" in message
    assert "is the file ';'-separated?" in message


def test_a_missing_field_lists_the_first_ten_columns(ctx: Context) -> None:
    row = {f"c{i}": str(i) for i in range(14)} | {"id": "a", "answer": "1"}
    text = orjson.dumps(row).decode()
    error = _rejected(ctx, {"spec": SPEC, "format": "jsonl"}, text, "field 'question'")
    assert "the row has 'c0', 'c1'" in error.message and "'c9' and 6 more" in error.message
    assert "'c10'" not in error.message and "separated" not in error.message


def test_a_tsv_upload_is_read_with_tabs(ctx: Context, tmp_path: Path) -> None:
    path = tmp_path / "rows.tsv"
    path.write_text("question\tanswer\nWhat is 1, plus 1?\t#### 2\n", encoding="utf-8")
    result = svc.import_benchmark(ctx, _req(benchmark="gsm8k"), path)
    assert result.cases == 1
    case = ds.get_dataset(ctx, "gsm8k").cases[0]
    assert (case.task, case.expected) == ("What is 1, plus 1?", "2")


def test_dev_null_is_not_a_regular_file_rather_than_not_found(ctx: Context) -> None:
    with pytest.raises(InvalidInput, match=r"^/dev/null: not a regular file"):
        svc.import_benchmark(ctx, _req(benchmark="gsm8k"), Path("/dev/null"))
    assert _registry(ctx) == []


def test_an_unknown_grader_id_is_stored_as_written_planning_rejects_it_later(
    ctx: Context,
) -> None:
    spec = {**SPEC, "grader_templates": [{"id": "not-yet-a-grader", "config": {"x": "{answer}"}}]}
    text = '{"id": "a", "question": "q", "answer": "1"}'
    assert svc.import_benchmark(ctx, _req(spec=spec, text=text)).cases == 1
    graders = ds.get_case(ctx, "mini", "1.0.0", "a").graders
    assert [(g.id, g.config) for g in graders] == [("not-yet-a-grader", {"x": "1"})]
    with pytest.raises(InvalidInput, match="unknown grader ids: not-yet-a-grader"):
        check_grader_ids(graders)


def test_a_mapping_typo_suggests_the_column_it_meant(ctx: Context) -> None:
    """``"answer_field": "answr"`` was reported row by row without a word about ``answer``."""
    spec = orjson.loads(orjson.dumps(SPEC))
    spec["mapping"]["answer_field"] = "answr"
    text = '{"id": "a", "question": "What is 1+1?", "answer": "2"}\n'
    error = _rejected(ctx, {"spec": spec, "format": "jsonl"}, text, "field 'answr'")
    assert "field 'answr' is missing; the row has 'id', 'question', 'answer'" in error.message
    assert "did you mean 'answer'?" in error.message
