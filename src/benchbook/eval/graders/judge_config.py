"""The ``judge`` grader's config (SPEC H.5), parsed and checked: :func:`parse_judge_config`.

Its keys are described in :mod:`benchbook.eval.judge_prompt`, which builds the judge's prompt from
it; the answer-only stand-in (:func:`benchbook.eval.graders.deferred.grade_judge`) checks a rubric
with it and :mod:`benchbook.eval.judges` runs the judge it describes. It lives among the graders
so that they never import the judge's prompt or call (issue 32: graders are the leaves).
"""

from __future__ import annotations

from pydantic import JsonValue, ValidationError

from benchbook.contracts.graders import JudgeConfig, judge_config
from benchbook.errors import InvalidInput


def parse_judge_config(config: dict[str, JsonValue]) -> JudgeConfig:
    """The judge config (:class:`~benchbook.contracts.graders.JudgeConfig`) with a text rubric
    turned into one criterion ``rubric``.

    Raises:
        InvalidInput: the rubric is missing or malformed, or a key is unknown;
            ``details.errors`` lists ``{path, message}`` with paths under ``config``.
    """
    try:
        return judge_config(config)
    except ValidationError as exc:
        errors = [
            {"path": ".".join(["config", *map(str, e["loc"])]), "message": e["msg"]}
            for e in exc.errors(include_url=False)
        ]
        first = errors[0]
        raise InvalidInput(
            f"judge {first['path']}: {first['message']}", {"errors": errors}
        ) from exc
