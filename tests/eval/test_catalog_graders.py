"""Catalog entries carry graders the evaluation layer knows, with the official scorers and the
travel family's proxy rubrics (refusal-inverted on flagged rows)."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import orjson
import pytest

from benchbook.contracts import Case, GraderSpec
from benchbook.datasets.catalog import CATALOG, get_entry
from benchbook.datasets.catalog.travel_rubrics import REFUSAL_RUBRIC
from benchbook.datasets.mapping import CaseBuilder, case_rows, parse_flag
from benchbook.datasets.sources.files import FileSource
from benchbook.eval.graders import GRADERS, grade
from benchbook.eval.judge_prompt import parse_judge_config, render_judge_prompt

TRAVEL = [
    "travelplanner",
    "travelplanner-fs",
    "flex-travelplanner",
    "trek",
    "travelbench",
    "traveleval",
]


def _build(entry_id: str, rows: list[dict[str, Any]]) -> list[Case]:
    entry = get_entry(entry_id)
    recipe = entry.recipe
    builder = CaseBuilder(recipe.mapping, entry_id, recipe.grader_templates, entry.hook)
    numbered = ((i + 1, row) for i, row in enumerate(rows))
    return [Case.model_validate(orjson.loads(body)) for _, body, _ in case_rows(numbered, builder)]


def _file_cases(entry_id: str, path: Path) -> list[Case]:
    entry = get_entry(entry_id)
    recipe = entry.recipe
    builder = CaseBuilder(recipe.mapping, entry_id, recipe.grader_templates, entry.hook)
    source = FileSource(path, json_key=recipe.source.json_key)
    return [Case.model_validate(orjson.loads(b)) for _, b, _ in case_rows(source.rows(), builder)]


@pytest.mark.parametrize("entry_id", sorted(CATALOG))
def test_every_catalog_grader_id_is_in_the_registry(entry_id: str) -> None:
    recipe = CATALOG[entry_id].recipe
    ids = [g.id for g in recipe.grader_templates] + [g.id for g in recipe.mapping.extra_graders]
    assert ids, f"{entry_id} has no graders"
    assert set(ids) <= set(GRADERS), set(ids) - set(GRADERS)
    if recipe.mapping.test_cmd_field:
        assert "command" in GRADERS


def test_gsm8k_and_gaia_use_their_official_scorers() -> None:
    gsm8k, gaia = get_entry("gsm8k").recipe, get_entry("gaia").recipe
    assert [g.id for g in gsm8k.grader_templates] == ["numeric"]
    assert [g.id for g in gaia.grader_templates] == ["gaia"]
    assert gsm8k.scoring and gsm8k.scoring.kind == "official"
    assert gaia.scoring and gaia.scoring.kind == "official"


def test_imported_gsm8k_cases_grade_with_the_numeric_scorer(shared_data: Path) -> None:
    cases = _file_cases("gsm8k", shared_data / "gsm8k" / "test.jsonl")
    thousands = next(c for c in cases if c.expected == "2,125")
    spec = thousands.graders[0]
    assert spec.id == "numeric"
    assert grade(spec, "FINAL ANSWER: 2,125", thousands).passed is True
    assert grade(spec, "So she needs $2125.", thousands).passed is True
    assert grade(spec, "FINAL ANSWER: 2,126", thousands).passed is False


@pytest.mark.parametrize("entry_id", TRAVEL)
def test_travel_entries_carry_a_proxy_judge_rubric(entry_id: str) -> None:
    recipe = get_entry(entry_id).recipe
    judges = [g for g in recipe.grader_templates if g.id == "judge"]
    assert len(judges) == 1
    config = parse_judge_config(judges[0].config)
    assert config.rubric.refusal is False and len(config.rubric.criteria) >= 4
    assert len({c.id for c in config.rubric.criteria}) == len(config.rubric.criteria)
    assert config.scoring is not None and config.scoring.kind == "proxy"
    assert config.scoring.approximates and config.scoring.official_evaluator
    assert recipe.scoring == config.scoring


def _trek_impossible_rows(path: Path) -> list[int]:
    with path.open(newline="", encoding="utf-8") as fh:
        return [i for i, row in enumerate(csv.DictReader(fh)) if float(row["impossible"]) == 1.0]


def test_trek_impossible_rows_and_only_those_carry_the_refusal_rubric(shared_data: Path) -> None:
    path = shared_data / "trek" / "trek_queries.first50.csv"
    impossible = _trek_impossible_rows(path)
    cases = _file_cases("trek", path)
    assert len(cases) == 50 and 0 < len(impossible) < 50
    refusing = []
    for index, case in enumerate(cases):
        (judge,) = [g for g in case.graders if g.id == "judge"]
        rubric = parse_judge_config(judge.config).rubric
        assert rubric.refusal is (rubric.kind == "refusal")
        assert case.metadata["impossible"] is (index in impossible)  # "0.0" parsed as false
        if rubric.refusal:
            refusing.append(index)
            assert judge.config["rubric"] == REFUSAL_RUBRIC
            assert judge.config["scoring"] == {  # the proxy scoring stays with the rubric
                "kind": "proxy",
                "approximates": "TREK's constraint evaluation",
                "official_evaluator": get_entry("trek").recipe.scoring.official_evaluator,  # type: ignore[union-attr]
            }
    assert refusing == impossible


def _travelbench_row(trace_id: str, **flags: object) -> dict[str, Any]:
    row: dict[str, Any] = {
        "trace_id": trace_id,
        "time": "2025-01-01 08:00",
        "query": "find a charging station on my route",
        "primary_intent": "planning_and_decision.route_planning",
        "context": "**Location**\n\tnear the county town",
        "intent": "charging",
        "missing_tool": False,
        "missing_info": False,
        "no_actionable": False,
    }
    row.update(flags)
    return row


@pytest.mark.parametrize(
    ("flags", "refusal"),
    [
        ({}, False),
        ({"missing_tool": True}, True),
        ({"missing_info": "1.0"}, True),
        ({"no_actionable": 1}, True),
        ({"missing_info": "0.0", "missing_tool": "0", "no_actionable": "false"}, False),
    ],
)
def test_travelbench_flagged_rows_expect_a_reasoned_refusal(
    flags: dict[str, object], refusal: bool
) -> None:
    (case,) = _build("travelbench", [_travelbench_row("1", **flags)])
    (judge,) = case.graders
    assert parse_judge_config(judge.config).rubric.refusal is refusal
    assert (case.expected is not None) is refusal
    assert all(isinstance(case.metadata[f], bool) for f in flags)


def test_a_flag_that_is_not_a_number_or_word_fails_the_row() -> None:
    from benchbook.errors import InvalidInput

    with pytest.raises(InvalidInput) as info:
        _build("travelbench", [_travelbench_row("1", missing_tool="maybe")])
    assert info.value.details["errors"][0]["row"] == 1


@pytest.mark.parametrize(
    ("value", "flag"),
    [
        ("0.0", False),
        ("1.0", True),
        ("0", False),
        (0.0, False),
        (1, True),
        ("", None),
        ("yes", True),
    ],
)
def test_flags_are_parsed_numerically(value: object, flag: bool | None) -> None:
    assert parse_flag(value) is flag


TP_ROW: dict[str, Any] = {
    "org": "St. Petersburg",
    "dest": "Rockford",
    "days": 3,
    "visiting_city_number": 1,
    "date": "['2022-03-16', '2022-03-17', '2022-03-18']",
    "people_number": 1,
    "local_constraint": "{'house rule': None, 'cuisine': None, 'room type': None}",
    "budget": 1700,
    "query": (
        "Please plan a 3-day trip from St. Petersburg to Rockford for one person, budget $1,700."
    ),
    "level": "easy",
    "annotated_plan": None,
    "reference_information": (
        "[{'Description': 'Flight from St. Petersburg to Rockford on 2022-03-16', "
        "'Content': 'F3573659 $474'}]"
    ),
}


def test_travelplanner_fs_puts_the_reference_in_a_file_and_asks_for_plan_md() -> None:
    (case,) = _build("travelplanner-fs", [TP_ROW])
    assert case.env.kind == "repo"
    files = case.env.source.files  # type: ignore[union-attr]
    assert files == {"reference_information.txt": TP_ROW["reference_information"]}
    assert TP_ROW["query"] in case.task and "plan.md" in case.task
    assert TP_ROW["reference_information"] not in case.task
    assert case.tags == ["easy"] and case.metadata["budget"] == 1700
    (judge,) = case.graders
    config = parse_judge_config(judge.config)
    assert config.answer_file == "plan.md" and config.rubric.refusal is False


def test_travelplanner_inline_keeps_the_reference_in_the_task() -> None:
    (case,) = _build("travelplanner", [TP_ROW])
    assert case.env.kind == "prompt"
    assert TP_ROW["reference_information"] in case.task


def test_the_judge_prompt_for_a_refusal_row_says_a_plan_fails(shared_data: Path) -> None:
    cases = _file_cases("trek", shared_data / "trek" / "trek_queries.first50.csv")
    case = next(c for c in cases if c.metadata["impossible"] is True)
    judge = parse_judge_config(case.graders[0].config)
    prompt = render_judge_prompt(judge, case, "Day 1: fly direct ...")
    assert case.task in prompt and "Day 1: fly direct" in prompt
    assert "only a refusal that explains why passes" in prompt
    assert "explains_reason" in prompt
    assert grade(GraderSpec.model_validate(case.graders[0].model_dump()), "x", case).status == (
        "skipped"
    )
