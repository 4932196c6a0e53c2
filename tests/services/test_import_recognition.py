"""Recognising an uploaded source in the preview (issue 14 item 1): a file that is a catalog
entry's export is offered as that entry; otherwise the default id comes from the file name and
the graders from the answers' type."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchbook.contracts.imports import ImportRequest
from benchbook.datasets.recognize import dataset_id_from_name, guess_graders
from benchbook.services import imports as svc
from benchbook.services.context import Context


def _req(**fields: Any) -> ImportRequest:
    return svc.parse_import_request(fields)


def _spec(mapping: dict[str, Any], dataset_id: str = "upload") -> ImportRequest:
    return _req(spec={"id": dataset_id, "source": {"kind": "file"}, "mapping": mapping})


def test_the_real_gsm8k_test_file_is_recognised_as_the_gsm8k_catalog_entry(
    ctx: Context, shared_data: Path
) -> None:
    test_file = shared_data / "gsm8k" / "test.jsonl"
    preview = svc.preview_benchmark_source(
        ctx, _spec({"task_template": " "}), test_file, "test.jsonl"
    )
    assert [m.benchmark for m in preview.catalog_matches][:1] == ["gsm8k"]
    match = preview.catalog_matches[0]
    assert match.columns == ["answer", "question"]
    assert match.mapping.answer_pattern == r"####\s*(.+?)\s*$"
    assert match.graders == ["numeric"]
    assert preview.suggested_id == "gsm8k"


def test_a_file_whose_rows_do_not_build_with_the_entry_is_not_recognised(
    ctx: Context, tmp_path: Path
) -> None:
    # GSM8K's columns, but no '#### N' in the answers: not a GSM8K export.
    data = tmp_path / "sums_test.jsonl"
    data.write_text('{"question": "1+1?", "answer": "two"}\n{"question": "2+2?", "answer": "4"}\n')
    preview = svc.preview_benchmark_source(
        ctx, _spec({"task_field": "question", "answer_field": "answer"}), data, data.name
    )
    assert preview.catalog_matches == []
    assert preview.suggested_id == "sums"
    assert [g.id for g in preview.grader_guess] == ["answer-match"]


def test_a_marker_extraction_is_an_answer_pattern_and_numbers_suggest_the_numeric_grader(
    ctx: Context, tmp_path: Path
) -> None:
    data = tmp_path / "Word-Sums.train.csv"
    data.write_text('q,a\n"1+1?","so ## 2"\n"2+3?","thus ## 5"\n')
    mapping = {"task_field": "q", "answer_field": "a", "answer_pattern": r"\#\#\s*(.+?)\s*$"}
    preview = svc.preview_benchmark_source(ctx, _spec(mapping), data, data.name)
    assert [c["expected"] for c in preview.cases] == ["2", "5"]
    assert [(g.id, g.config) for g in preview.grader_guess] == [
        ("numeric", {"mode": "flexible-extract"})
    ]
    assert preview.suggested_id == "word-sums"


def test_a_default_id_drops_extensions_and_split_words() -> None:
    assert dataset_id_from_name("GSM8K_test.jsonl.gz") == "gsm8k"
    assert dataset_id_from_name("train.first300.jsonl") is None
    assert dataset_id_from_name("test.jsonl") is None
    assert dataset_id_from_name("my data (v2).csv") == "my-data-v2"
    assert guess_graders([]) == []
    assert [g.id for g in guess_graders(["18", 3, "-2.5", "1,000"])] == ["numeric"]
    assert [g.id for g in guess_graders(["18", "yes"])] == ["answer-match"]


def test_an_upload_equal_to_the_latest_version_is_known_before_import(
    ctx: Context, shared_data: Path
) -> None:
    gsm8k = shared_data / "gsm8k" / "test.jsonl"
    train = shared_data / "gsm8k" / "train.first300.jsonl"
    bump = _req(benchmark="gsm8k", bump="minor")
    assert svc.compare_with_latest(ctx, bump, "gsm8k", gsm8k, "test.jsonl") is None  # no version
    svc.import_benchmark(ctx, _req(benchmark="gsm8k"), gsm8k, file_name="test.jsonl")
    same = svc.compare_with_latest(ctx, bump, "gsm8k", gsm8k, "test.jsonl")
    assert same == {"latest": "1.0.0", "identical": True}
    assert svc.import_benchmark(ctx, bump, gsm8k, file_name="test.jsonl").identical_to == "1.0.0"
    other = svc.compare_with_latest(ctx, bump, "gsm8k", train, "train.first300.jsonl")
    assert other == {"latest": "1.0.0", "identical": False}
    # read from disk (the CLI's --file) rather than uploaded: an upload is recorded as --file
    # of a file with its name, so the same lineage and the same version
    assert svc.compare_with_latest(ctx, bump, "gsm8k", gsm8k) == {
        "latest": "1.0.0",
        "identical": True,
    }
    assert svc.compare_with_latest(ctx, bump, "gsm8k", None) is None
