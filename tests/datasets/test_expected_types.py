"""Answers keep their JSON type and no number is rounded (issue 8 items 1-2): the contract, the
mapping, the fast canonical path and the file readers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchbook.contracts import Case
from benchbook.contracts.recipe import Mapping
from benchbook.datasets.identity import case_body, sha256_hex
from benchbook.datasets.mapping import CaseBuilder, case_rows
from benchbook.datasets.sources.files import FileSource
from benchbook.errors import InvalidInput

BIG = 123456789012345678901234567890


def _case(expected: Any) -> Case:
    return Case.model_validate(
        {"id": "a", "env": {"kind": "prompt"}, "task": "q", "expected": expected}
    )


@pytest.mark.parametrize("value", ["0", 0, 0.5, False, None, [1, "a"], {"k": [True]}, BIG])
def test_expected_is_any_json_value_kept_as_given(value: Any) -> None:
    case = _case(value)
    assert case.expected == value and type(case.expected) is type(value)
    assert json.loads(case_body(case))["expected"] == value


def test_zero_text_zero_false_and_null_are_four_different_answers() -> None:
    hashes = {sha256_hex(case_body(_case(v))) for v in (0, "0", False, None)}
    assert len(hashes) == 4


def test_a_non_finite_expected_answer_is_rejected() -> None:
    with pytest.raises(ValueError):
        _case(float("nan"))


def _built(rows: list[dict[str, Any]], **mapping: Any) -> list[dict[str, Any]]:
    builder = CaseBuilder(Mapping(task_field="q", answer_field="a", **mapping), "ds")
    numbered = [(i + 1, r) for i, r in enumerate(rows)]
    return [json.loads(body) for _, body, _ in case_rows(numbered, builder)]


def test_an_answer_column_keeps_its_json_type() -> None:
    values = ["4", 4, 4.5, True, [1, 2], {"x": None}, BIG, -(BIG)]
    built = _built([{"q": f"q{i}", "a": v} for i, v in enumerate(values)])
    assert [c["expected"] for c in built] == values
    assert [type(c["expected"]) for c in built] == [type(v) for v in values]


def test_an_answer_pattern_reads_the_text_form() -> None:
    built = _built([{"q": "q", "a": 1450}], answer_pattern=r"(\d+)")
    assert built[0]["expected"] == "1450"


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("rows.json", '[{"id":"a","question":"q","answer":123456789012345678901234567890}]'),
        ("rows.jsonl", '{"id":"a","question":"q","answer":123456789012345678901234567890}\n'),
    ],
)
def test_integers_beyond_64_bits_are_read_exactly(tmp_path: Path, name: str, text: str) -> None:
    rows = list(FileSource(_write(tmp_path, name, text)).rows())
    assert rows[0][1]["answer"] == BIG and type(rows[0][1]["answer"]) is int


@pytest.mark.parametrize(
    ("name", "text", "where", "token"),
    [
        ("r.jsonl", '{"a": 1}\n\n{"q": "x", "a": NaN}\n', "line 3, column 17", "NaN"),
        ("r.jsonl", '{"q": "x", "a": -Infinity}\n', "line 1, column 17", "-Infinity"),
        ("r.json", '[{"q": "x",\n  "a": [1, Infinity]}]', "line 2, column 12", "Infinity"),
        (
            "r.jsonl",
            '{"q": "x", "big": 123456789012345678901234567890, "a": NaN}\n',
            "line 1",
            "NaN",
        ),
    ],
)
def test_nan_and_infinity_are_rejected_naming_line_column_and_token(
    tmp_path: Path, name: str, text: str, where: str, token: str
) -> None:
    with pytest.raises(InvalidInput) as err:
        list(FileSource(_write(tmp_path, name, text)).rows())
    assert where in err.value.message and f"{token} is not a JSON number" in err.value.message


def test_a_folder_task_file_keeps_big_integers_and_refuses_repeated_keys(tmp_path: Path) -> None:
    from benchbook.datasets.sources.folder import FolderSource

    (tmp_path / "a.json").write_text('{"q": "x", "answer": 123456789012345678901234567890}')
    rows = list(FolderSource(tmp_path).rows())
    assert rows[0][1]["answer"] == BIG
    (tmp_path / "b.json").write_text('{"q": "x",\n "q": "y"}')
    with pytest.raises(InvalidInput, match="line 2: duplicate key 'q'"):
        list(FolderSource(tmp_path).rows())
