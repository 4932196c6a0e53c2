"""Rows → cases (SPEC E.3), preview guesses and the assertion (SPEC E.4)."""

from __future__ import annotations

from typing import Any

import pytest

from benchbook.contracts import Case, GraderSpec
from benchbook.contracts.recipe import GraderTemplate, Mapping
from benchbook.datasets.identity import case_body, sha256_hex
from benchbook.datasets.mapping import CaseBuilder, case_row, case_rows, parse_flag, resolve_env
from benchbook.datasets.preview import describe_mapping, guess_mapping
from benchbook.errors import InvalidInput


def _rows(*rows: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    return [(i + 1, r) for i, r in enumerate(rows)]


def _cases(mapping: Mapping, *rows: dict[str, Any], **kw: Any) -> list[Case]:
    builder = CaseBuilder(mapping, "ds", **kw)
    return [Case.model_validate_json(body) for _, body, _ in case_rows(_rows(*rows), builder)]


def test_positional_ids_are_dataset_id_and_zero_based_index() -> None:
    cases = _cases(Mapping(task_field="q"), {"q": "a"}, {"q": "b"})
    assert [c.id for c in cases] == ["ds-0", "ds-1"]


def test_an_id_field_value_becomes_text() -> None:
    cases = _cases(Mapping(id_field="n", task_field="q"), {"n": 7, "q": "a"})
    assert cases[0].id == "7"


def test_answer_pattern_takes_the_first_group() -> None:
    mapping = Mapping(task_field="q", answer_field="a", answer_pattern=r"####\s*(.+?)\s*$")
    cases = _cases(mapping, {"q": "x", "a": "work\n#### 1,450 "})
    assert cases[0].expected == "1,450"
    assert cases[0].env.kind == "prompt"


def test_env_inference_follows_spec_order() -> None:
    assert resolve_env(Mapping(task_field="t", git_field="g", start_url_field="u")) == "repo"
    assert resolve_env(Mapping(task_field="t", start_url_field="u", answer_field="a")) == "browser"
    assert resolve_env(Mapping(task_field="t", answer_field="a")) == "prompt"
    assert resolve_env(Mapping(task_field="t")) == "browser"
    assert resolve_env(Mapping(task_field="t", env="os-use", answer_field="a")) == "os-use"


def test_start_url_field_makes_browser_cases() -> None:
    cases = _cases(
        Mapping(task_field="t", start_url_field="web"), {"t": "x", "web": "https://a.b/"}
    )
    assert cases[0].env.model_dump() == {"kind": "browser", "start_url": "https://a.b/"}


def test_a_javascript_start_url_fails_the_row() -> None:
    builder = CaseBuilder(Mapping(task_field="t", start_url_field="u"), "ds")
    with pytest.raises(InvalidInput) as info:
        list(case_rows(_rows({"t": "x", "u": "javascript:alert(1)"}), builder))
    assert info.value.details["errors"][0]["row"] == 1


def test_git_and_ref_make_a_repo_env_with_github_shorthand() -> None:
    mapping = Mapping(task_field="t", git_field="repo", ref_field="sha")
    case = _cases(mapping, {"t": "fix", "repo": "psf/requests", "sha": "abc"})[0]
    assert case.env.model_dump()["source"] == {
        "git": "https://github.com/psf/requests.git",
        "ref": "abc",
    }


def test_metadata_star_keeps_unmapped_columns_with_their_types() -> None:
    mapping = Mapping(id_field="id", task_field="q", answer_field="a")
    row = {"id": "x", "q": "?", "a": "1", "n": 3, "nested": {"k": [1, None]}, "f": 0.5}
    assert _cases(mapping, row)[0].metadata == {"n": 3, "nested": {"k": [1, None]}, "f": 0.5}


def test_gold_fields_are_kept_and_listed() -> None:
    mapping = Mapping(task_field="q", metadata_fields=[], gold_fields=["patch"])
    case = _cases(mapping, {"q": "x", "patch": "diff"})[0]
    assert case.metadata == {"patch": "diff"} and case.gold_fields == ["patch"]


def test_a_missing_gold_field_fails_the_row() -> None:
    builder = CaseBuilder(Mapping(task_field="q", gold_fields=["patch"]), "ds")
    with pytest.raises(InvalidInput, match="gold field 'patch' is missing"):
        list(case_rows(_rows({"q": "x"}), builder))


@pytest.mark.parametrize(
    ("value", "flag"),
    [("0.0", False), ("1.0", True), ("true", True), ("no", False), ("", None), (0, False)],
)
def test_flags_are_parsed_numerically(value: object, flag: bool | None) -> None:
    assert parse_flag(value) is flag


def test_flag_fields_become_booleans_in_metadata() -> None:
    mapping = Mapping(task_field="q", flag_fields=["impossible"])
    assert _cases(mapping, {"q": "x", "impossible": "1.0"})[0].metadata["impossible"] is True


def test_tag_fields_take_scalars_and_lists() -> None:
    mapping = Mapping(task_field="q", tag_fields=["site", "apps"])
    case = _cases(mapping, {"q": "x", "site": " Web ", "apps": ["a", "b", "a"], "lvl": 1})[0]
    assert case.tags == ["Web", "a", "b"]


def test_grader_templates_render_per_row_and_extra_graders_follow() -> None:
    mapping = Mapping(task_field="q", extra_graders=[GraderSpec(id="cost")])
    templates = [GraderTemplate(id="regex", config={"pattern": "^{ans}$", "flags": ["i"]})]
    case = _cases(mapping, {"q": "x", "ans": "42"}, grader_templates=templates)[0]
    assert [g.id for g in case.graders] == ["regex", "cost"]
    assert case.graders[0].config == {"pattern": "^42$", "flags": ["i"]}


def test_bad_rows_are_listed_with_row_numbers_and_nothing_is_yielded() -> None:
    builder = CaseBuilder(Mapping(task_template="{question}"), "ds")
    rows = _rows({"question": "ok"}, {"q": "bad"}, {"question": "ok"}, {"other": 1})
    out: list[object] = []
    with pytest.raises(InvalidInput) as info:
        out.extend(case_rows(rows, builder))
    assert [e["row"] for e in info.value.details["errors"]] == [2, 4]
    assert "field 'question' is missing" in info.value.message
    assert len(out) == 1  # only rows before the first failure were ever yielded


def test_limit_stops_reading() -> None:
    builder = CaseBuilder(Mapping(task_field="q"), "ds")
    assert len(list(case_rows(_rows({"q": "a"}, {"q": "b"}, {"q": "c"}), builder, 2))) == 2


def _slow(case: dict[str, Any]) -> tuple[str, bytes, str]:
    body = case_body(Case.model_validate(case))
    return case["id"], body, sha256_hex(body)


@pytest.mark.parametrize(
    "mapping",
    [
        Mapping(task_field="q", answer_field="a", tag_fields=["t"], gold_fields=["g"]),
        Mapping(task_field="q", start_url_field="u", metadata_fields=["t"]),
        Mapping(task_field="q", git_field="repo", ref_field="sha", image="img:{t}"),
        Mapping(task_field="q", env="repo", repo_path="/testbed", flag_fields=["f"]),
        Mapping(task_field="q", env="repo", files_template={"a.txt": "{a}"}),
        Mapping(task_field="q", env="os-use", placement={"os": "linux"}, test_cmd_field="a"),
    ],
)
def test_fast_bodies_equal_the_pydantic_canonical_bodies(mapping: Mapping) -> None:
    row = {
        "q": "task",
        "a": "ans",
        "t": "tag",
        "g": {"x": [1]},
        "u": "https://x.org",
        "repo": "o/r",
        "sha": "s",
        "f": "0.0",
    }
    builder = CaseBuilder(mapping, "ds", [GraderTemplate(id="judge", config={"r": "{q}"})])
    for index in range(3):
        case = builder.build(index, dict(row))
        assert case_row(builder, case) == _slow(builder.build(index, dict(row)))
    assert builder.canon.enabled  # the sampled cross-check never disagreed


def test_a_hook_edits_the_case_and_is_still_validated() -> None:
    def hook(case: dict[str, Any], row: dict[str, Any]) -> None:
        case["image"] = f"img-{row['q']}"
        case["timeout_s"] = 60

    builder = CaseBuilder(Mapping(task_field="q"), "ds", hook=hook)
    ((_, body, _),) = list(case_rows(_rows({"q": "x"}), builder))
    case = Case.model_validate_json(body)
    assert (case.image, case.timeout_s) == ("img-x", 60)

    def bad(case: dict[str, Any], row: dict[str, Any]) -> None:
        case["timeout_s"] = -1

    with pytest.raises(InvalidInput, match="timeout_s"):
        list(case_rows(_rows({"q": "x"}), CaseBuilder(Mapping(task_field="q"), "ds", hook=bad)))


def test_guesses_follow_the_spec_patterns() -> None:
    guess = guess_mapping(["task_id", "Question", "Level", "Final answer", "website"])
    assert guess["id_field"] == "task_id"
    assert guess["task_field"] == "Question"
    assert guess["answer_field"] == "Final answer"
    assert guess["start_url_field"] == "website"
    assert guess_mapping(["id", "repo_id"])["id_field"] == "id"
    swe = guess_mapping(["instance_id", "repo", "base_commit", "problem_statement"])
    assert (swe["git_field"], swe["ref_field"]) == ("repo", "base_commit")


def test_the_assertion_names_fields_and_warns_when_incomplete() -> None:
    sentence, warnings = describe_mapping(Mapping(task_field="question", answer_field="answer"))
    assert sentence == (
        "The agent answers each row's `question`; the answer is graded against `answer`."
    )
    assert warnings == []
    _, warnings = describe_mapping(Mapping(task_field="q", env="repo"))
    assert any("repo env" in w for w in warnings)
    _, warnings = describe_mapping(Mapping(task_field="q", env="os-use"))
    assert any("without an image" in w for w in warnings)
