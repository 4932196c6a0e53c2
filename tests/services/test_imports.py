"""Benchmark imports through the service (SPEC E), on SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchbook.contracts.imports import ImportProgress, ImportRequest
from benchbook.errors import Conflict, InvalidInput
from benchbook.services import datasets as ds
from benchbook.services import imports as svc
from benchbook.services.context import Context


def _req(**fields: Any) -> ImportRequest:
    return svc.parse_import_request(fields)


def _registry(ctx: Context) -> list[tuple[str, str, int]]:
    page = ds.list_datasets(ctx, limit=1000)
    return [(d.id, d.latest, d.cases) for d in page.items]


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
    assert lineage is not None and lineage.via == "spec" and lineage.source.kind == "upload"  # type: ignore[union-attr]


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
    _rejected(ctx, {"spec": SPEC, "format": "jsonl"}, text, "'a' at rows 1, 2")


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


def test_a_file_benchmark_without_a_file_asks_for_one(ctx: Context) -> None:
    with pytest.raises(InvalidInput, match="use --file PATH"):
        svc.import_benchmark(ctx, _req(benchmark="webvoyager"))
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
    assert result.warnings == ["row 2: field 'question' is missing"]


def test_list_benchmarks_has_the_catalog(ctx: Context) -> None:
    ids = {b.id for b in svc.list_benchmarks(ctx)}
    assert {"gsm8k", "webvoyager", "trek", "osworld", "swe-bench-verified"} <= ids
