"""Checking a grading plan before any case runs (SPEC H.6: plans are validated, fail closed).

:func:`check_plan` refuses unknown grader ids, unknown config keys (named, with the closest
known key suggested by ``difflib``) and a judge that names no endpoint or model — on run start,
report and rescore, whatever the transport, since every one of them calls the same service.
The schemas are :data:`benchbook.contracts.graders.GRADER_CONFIGS`.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence

from pydantic import BaseModel, ValidationError

from benchbook.contracts.dataset import GraderSpec
from benchbook.contracts.graders import GRADER_CONFIGS, JudgeConfig, Rubric, judge_config
from benchbook.errors import InvalidInput
from benchbook.eval.graders import check_grader_ids, numeric, regex


def check_plan(specs: Sequence[GraderSpec]) -> list[BaseModel]:
    """Each spec's config parsed by its grader's schema, in plan order.

    Raises:
        InvalidInput: an unknown grader id (the known ones listed), an unknown config key, a
            malformed judge config, or a judge without ``base_url``/``model``; the message
            names ``graders[i] (id)``.
    """
    check_grader_ids(specs)
    parsed = [
        check_grader_config(spec, f"graders[{i}] ({spec.id})") for i, spec in enumerate(specs)
    ]
    check_grader_values(specs)
    return parsed


_VALUE_CHECKS: dict[str, Callable[[GraderSpec], tuple[str, str] | None]] = {
    "numeric": numeric.config_problem,
    "regex": regex.config_problem,
}


def check_grader_values(specs: Sequence[GraderSpec]) -> None:
    """Refuse a config value no case could be graded with (a ``regex`` pattern that does not
    compile, an unknown ``numeric`` mode, a negative ``tolerance`` …) — before any case runs,
    instead of a grader error on every case.

    Raises:
        InvalidInput: ``graders[i] (id): config.key: problem``; ``details.errors[0].path`` is
            ``graders[i].config.key``.
    """
    for i, spec in enumerate(specs):
        check = _VALUE_CHECKS.get(spec.id)
        problem = check(spec) if check is not None else None
        if problem is not None:
            key, message = problem
            path = f"graders[{i}].config.{key}"
            raise InvalidInput(
                f"graders[{i}] ({spec.id}): config.{key}: {message}",
                {"grader": spec.id, "key": key, "errors": [{"path": path, "message": message}]},
            )


def check_grader_config(spec: GraderSpec, where: str) -> BaseModel:
    """``spec.config`` parsed by its grader's schema; a plan's judge must name its endpoint.

    Args:
        spec: a known grader id (unknown ids are refused by ``check_grader_ids`` first).
        where: how the spec is named in messages (``graders[1] (judge)``).

    Raises:
        InvalidInput: an unknown key (named, with the closest known key suggested), a bad
            judge value, or a judge without ``base_url`` or ``model``; ``details`` has
            ``{grader, key?, suggestion?, errors}``.
    """
    schema = GRADER_CONFIGS[spec.id]
    try:
        parsed = judge_config(spec.config) if spec.id == "judge" else schema(**spec.config)
    except ValidationError as exc:
        raise _refusal(spec, schema, where, exc) from exc
    if isinstance(parsed, JudgeConfig) and (parsed.base_url is None or parsed.model is None):
        missing = " and ".join(k for k in ("base_url", "model") if getattr(parsed, k) is None)
        raise InvalidInput(
            f"{where}: the judge needs {missing} (the OpenAI-compatible endpoint and model that"
            " judge); a judge without them would judge nothing",
            {"grader": spec.id, "missing": missing.split(" and ")},
        )
    return parsed


def _refusal(
    spec: GraderSpec, schema: type[BaseModel], where: str, exc: ValidationError
) -> InvalidInput:
    errors = [
        {"path": ".".join(["config", *map(str, e["loc"])]), "message": e["msg"]}
        for e in exc.errors(include_url=False)
    ]
    unknown = [e for e in exc.errors(include_url=False) if e["type"] == "extra_forbidden"]
    if unknown:
        key = str(unknown[0]["loc"][-1])
        known = sorted(schema.model_fields)
        if spec.id == "judge" and len(unknown[0]["loc"]) > 1:
            known = sorted(Rubric.model_fields)  # a key inside the rubric
        close = difflib.get_close_matches(key, known, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else f" (known: {', '.join(known)})"
        return InvalidInput(
            f"{where}: unknown config key {key!r} for grader {spec.id!r}{hint}",
            {
                "grader": spec.id,
                "key": key,
                "suggestion": close[0] if close else None,
                "errors": errors,
            },
        )
    first = errors[0]
    return InvalidInput(
        f"{where}: {first['path']}: {first['message']}", {"grader": spec.id, "errors": errors}
    )
