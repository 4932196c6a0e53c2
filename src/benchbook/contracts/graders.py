"""Grader configs (SPEC H.5): one schema per grader id, shared by every transport.

:data:`GRADER_CONFIGS` maps each grader id of :data:`~benchbook.contracts.dataset.GRADER_IDS`
to the pydantic model of its ``config``. The CLI, the HTTP API, MCP and the web form all start
runs through one service, which checks a plan's graders against these schemas
(:func:`benchbook.eval.plan_checks.check_plan`) before any case runs: unknown keys are refused
by name with the closest known key suggested, so a typo such as ``rubrik`` never silently
becomes "no rubric". Values no answer could be graded with (a ``regex`` pattern that does not
compile, an unknown ``numeric`` mode, a negative ``tolerance``) are refused there too, by the
graders' own checks (``plan_checks.check_grader_values``); the judge's config is checked whole,
since a judge that cannot be asked is refused before the run, never skipped.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from benchbook.contracts.common import STRICT, HttpUrl, NonEmptyStr
from benchbook.contracts.provenance import Scoring

# Deferred like every contract but route bodies (tests/contracts/test_deferred_build.py).
_CLOSED = ConfigDict(extra="forbid", allow_inf_nan=False, defer_build=True)


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
    """A ``judge`` grader's config (:mod:`benchbook.eval.judge_prompt` says what each key
    does); ``rubric`` text is one criterion. Unknown keys are refused."""

    model_config = _CLOSED
    rubric: Rubric
    scoring: Scoring | None = None
    answer_file: str | None = None
    base_url: HttpUrl | None = None
    model: NonEmptyStr | None = None
    api_key_secret: NonEmptyStr | None = None
    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.\-]+$")] = "judge"
    temperature: Annotated[float, Field(ge=0, le=2)] = 0.0
    max_retries: Annotated[int, Field(ge=0, le=10)] = 2
    timeout_s: Annotated[float, Field(gt=0)] = 120.0
    # The browser's judge runner reads these two (SPEC H.3); the judge itself ignores them.
    screenshot: bool | None = None
    state_check: JsonValue = None


class AnswerMatchConfig(BaseModel):
    """``answer-match``: ``mode`` (exact|normalized|…), ``contains``, ``expected``."""

    model_config = _CLOSED
    mode: JsonValue = None
    contains: JsonValue = None
    expected: JsonValue = None


class NumericConfig(BaseModel):
    """``numeric`` (GSM8K, MATH): ``mode`` (how the answer is extracted), ``tolerance``,
    ``expected``."""

    model_config = _CLOSED
    mode: JsonValue = None
    tolerance: JsonValue = None
    expected: JsonValue = None


class GaiaConfig(BaseModel):
    """``gaia``: ``extract`` (final-answer|none), ``expected``."""

    model_config = _CLOSED
    extract: JsonValue = None
    expected: JsonValue = None


class RegexConfig(BaseModel):
    """``regex``: ``pattern`` and the flags ``ignore_case``, ``multiline``, ``dotall``,
    ``fullmatch``."""

    model_config = _CLOSED
    pattern: JsonValue = None
    ignore_case: JsonValue = None
    multiline: JsonValue = None
    dotall: JsonValue = None
    fullmatch: JsonValue = None


class CommandConfig(BaseModel):
    """``command``: ``cmd`` (shell) or ``argv``, ``timeout_s``, ``pass_pattern``; or ``grader``,
    an admin-registered grader's ``id@version`` (``docs/security.md``, who may run what)."""

    model_config = _CLOSED
    grader: JsonValue = None
    cmd: JsonValue = None
    argv: JsonValue = None
    timeout_s: JsonValue = None
    pass_pattern: JsonValue = None


class TestsPassConfig(CommandConfig):
    """``tests-pass``: the ``command`` keys plus ``cmd_field`` (the case metadata key)."""

    cmd_field: JsonValue = None


class SweBenchConfig(BaseModel):
    """``swe-bench``: ``source`` and ``report_sha256`` of an imported official report."""

    model_config = _CLOSED
    source: JsonValue = None
    report_sha256: JsonValue = None


class StepsConfig(BaseModel):
    """``steps``: ``max`` tool calls."""

    model_config = _CLOSED
    max: JsonValue = None


class CostConfig(BaseModel):
    """``cost``: ``max_usd``."""

    model_config = _CLOSED
    max_usd: JsonValue = None


class LatencyConfig(BaseModel):
    """``latency``: ``max_ms`` or ``max_s``."""

    model_config = _CLOSED
    max_ms: JsonValue = None
    max_s: JsonValue = None


class LocalizationConfig(BaseModel):
    """``localization``: no keys."""

    model_config = _CLOSED


GRADER_CONFIGS: dict[str, type[BaseModel]] = {
    "answer-match": AnswerMatchConfig,
    "numeric": NumericConfig,
    "gaia": GaiaConfig,
    "regex": RegexConfig,
    "judge": JudgeConfig,
    "command": CommandConfig,
    "tests-pass": TestsPassConfig,
    "swe-bench": SweBenchConfig,
    "steps": StepsConfig,
    "cost": CostConfig,
    "latency": LatencyConfig,
    "localization": LocalizationConfig,
}
"""Grader id → the model of its ``config``."""


def _inline(node: Any, defs: dict[str, Any]) -> Any:
    """``node`` with every ``#/$defs/X`` reference replaced by its definition, titles dropped."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            return _inline(defs[ref.removeprefix("#/$defs/")], defs)
        return {k: _inline(v, defs) for k, v in node.items() if k not in ("title", "$defs")}
    if isinstance(node, list):
        return [_inline(v, defs) for v in node]
    return node


def plan_config_schema(grader_id: str) -> dict[str, Any]:
    """The JSON Schema of a run plan's ``config`` for ``grader_id`` (no ``$ref``): the model's
    own, and for ``judge`` the rubric as text or object and ``base_url``/``model`` required
    (a plan's judge must be able to ask)."""
    model = GRADER_CONFIGS[grader_id]
    raw = model.model_json_schema()
    schema: dict[str, Any] = _inline(raw, raw.get("$defs", {}))
    if grader_id == "judge":
        props = schema["properties"]
        props["rubric"] = {"anyOf": [{"type": "string", "minLength": 1}, props["rubric"]]}
        for key in ("base_url", "model"):
            props[key] = next(b for b in props[key]["anyOf"] if b.get("type") != "null")
        schema["required"] = ["rubric", "base_url", "model"]
    return schema


def plan_config_rules(schema: dict[str, Any]) -> None:
    """``json_schema_extra`` of a plan's grader: one ``if id = X then config: schema of X``
    rule per grader id (JSON Schema draft 7 ``if``/``then``), so the OpenAPI document says
    exactly which config keys each grader takes."""
    schema["allOf"] = [
        {
            "if": {"properties": {"id": {"const": gid}}, "required": ["id"]},
            "then": {"properties": {"config": plan_config_schema(gid)}},
        }
        for gid in GRADER_CONFIGS
    ]


def judge_config(config: dict[str, JsonValue]) -> JudgeConfig:
    """A judge config, a text ``rubric`` made one criterion (raises ``ValidationError``)."""
    data = dict(config)
    if isinstance(data.get("rubric"), str):
        data["rubric"] = {"criteria": [{"id": "rubric", "description": data["rubric"]}]}
    return JudgeConfig.model_validate(data)


__all__ = [
    "GRADER_CONFIGS",
    "Criterion",
    "JudgeConfig",
    "Rubric",
    "judge_config",
    "plan_config_rules",
    "plan_config_schema",
]
