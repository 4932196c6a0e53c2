"""Judge rubrics as data: parsing a ``judge`` grader's config and rendering its instructions.

A ``judge`` grader spec's ``config`` holds:

- ``rubric`` — either text (one criterion) or ``{kind, criteria: [{id, description}],
  pass_rule: "all", refusal: bool}``. ``refusal = true`` marks a *refusal-inverted* rubric: the
  case cannot be satisfied, so only a reasoned refusal passes and any concrete plan fails.
- ``scoring`` (optional) — ``{kind: official|proxy, approximates?, official_evaluator?}``: whether
  this rubric is the benchmark's own evaluator or a proxy of it, and which one.
- ``answer_file`` (optional) — the workspace file holding the answer (``plan.md``).

This module calls no model: :func:`render_judge_prompt` builds the text a judge would receive
(task, final answer, expected, milestones, criteria and the reply format); executing the judge is
a later step.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from benchbook.contracts.common import STRICT, NonEmptyStr
from benchbook.contracts.dataset import Case
from benchbook.contracts.provenance import Scoring
from benchbook.errors import InvalidInput


class Criterion(BaseModel):
    """One thing the judge checks: a stable ``id`` and what passes."""

    model_config = STRICT
    id: NonEmptyStr
    description: NonEmptyStr


class Rubric(BaseModel):
    """The criteria a judge applies; the case passes when every criterion passes."""

    model_config = STRICT
    kind: str = "rubric"
    criteria: list[Criterion] = Field(min_length=1)
    pass_rule: Literal["all"] = "all"
    refusal: bool = False


class JudgeConfig(BaseModel):
    """A parsed ``judge`` grader config (module docstring)."""

    # Other keys (``screenshot``, ``state_check``) belong to the judge runner and are kept.
    model_config = ConfigDict(extra="allow", allow_inf_nan=False)
    rubric: Rubric
    scoring: Scoring | None = None
    answer_file: str | None = None


def parse_judge_config(config: dict[str, JsonValue]) -> JudgeConfig:
    """The judge config with a text rubric turned into one criterion ``rubric``.

    Raises:
        InvalidInput: the rubric is missing or malformed; ``details.errors`` lists
            ``{path, message}`` with paths under ``config``.
    """
    data = dict(config)
    rubric = data.get("rubric")
    if isinstance(rubric, str):
        data["rubric"] = {"criteria": [{"id": "rubric", "description": rubric}]}
    try:
        return JudgeConfig.model_validate(data)
    except ValidationError as exc:
        errors = [
            {"path": ".".join(["config", *map(str, e["loc"])]), "message": e["msg"]}
            for e in exc.errors(include_url=False)
        ]
        first = errors[0]
        raise InvalidInput(
            f"judge {first['path']}: {first['message']}", {"errors": errors}
        ) from exc


def render_judge_prompt(judge: JudgeConfig, case: Case, final_answer: str) -> str:
    """The judge's instructions for one case: task, answer, reference, milestones, criteria,
    and the reply format ``{"criteria": [{"id", "passed", "reasoning"}], "passed"}``."""
    rubric = judge.rubric
    parts = [f"Task given to the agent:\n{case.task}"]
    where = f" (the contents of {judge.answer_file})" if judge.answer_file else ""
    parts.append(f"The agent's final answer{where}:\n{final_answer}")
    if case.expected:
        parts.append(f"Reference (gold) information:\n{case.expected}")
    if case.milestones:
        lines = [f"- {m.id}: {m.description}" for m in case.milestones]
        parts.append("Milestones:\n" + "\n".join(lines))
    if rubric.refusal:
        parts.append(
            "This request cannot be satisfied as stated. A concrete plan or answer FAILS; only a "
            "refusal that explains why passes."
        )
    criteria = "\n".join(f"- {c.id}: {c.description}" for c in rubric.criteria)
    parts.append(f"Criteria (the case passes only if all pass):\n{criteria}")
    parts.append(
        'Reply with JSON: {"criteria": [{"id": <criterion id>, "passed": true|false, '
        '"reasoning": <text>}], "passed": true|false}.'
    )
    return "\n\n".join(parts)
