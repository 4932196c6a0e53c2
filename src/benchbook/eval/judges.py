"""Judges (SPEC H.5): the model call that grades, and the scores it gives.

The config, the rubric and the prompt are :mod:`benchbook.eval.judge_prompt`'s. :func:`run_judge`
asks the model for JSON (``response_format`` json_schema, falling back to parsing the first JSON
object of a plain reply) and turns its verdicts into scores, caching them by (judge spec hash,
input hash) so that rescoring with an unchanged judge calls no model. Each judge call is kept on
the judge's first score (``detail.call``): the request (endpoint, model, messages, response
format), the raw reply, tokens, cost and latency — what a reader needs to check a verdict.

Fail closed (SPEC H.6): a judge that cannot give a verdict — no endpoint or model, a missing
secret, a failed call, an unparseable reply, a criterion or milestone left out — gives scores with
``status = error``, which make the (case, sample) a grader error.
"""

from __future__ import annotations

import asyncio
import json
import time
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from benchbook.contracts.dataset import Case, GraderSpec
from benchbook.contracts.run import Usage
from benchbook.contracts.score import Score
from benchbook.datasets.identity import canonical_json, sha256_hex
from benchbook.eval.graders.judge_config import parse_judge_config
from benchbook.eval.judge_prompt import RESPONSE_FORMAT, JudgeConfig, judge_messages
from benchbook.eval.submission import Grading, Submission
from benchbook.runtime.egress import SecretHostRefused, secret_for

if TYPE_CHECKING:  # ``openai`` (~0.8 s to import) is loaded only when a judge calls a model
    import openai

#: Longest raw reply kept in a score (characters).
MAX_REPLY_CHARS = 4000


class ItemVerdict(BaseModel):
    """The judge's verdict on one criterion or milestone."""

    model_config = ConfigDict(extra="ignore")
    id: str
    passed: bool
    reasoning: str = ""


class JudgeVerdict(BaseModel):
    """The judge's reply: ``{criteria, milestones, passed}``."""

    model_config = ConfigDict(extra="ignore")
    criteria: list[ItemVerdict]
    milestones: list[ItemVerdict] = Field(default_factory=list)
    passed: bool | None = None


def parse_verdict(text: str, *, lenient: bool) -> JudgeVerdict | None:
    """The verdict in ``text`` (the whole text as JSON; with ``lenient``, else the first JSON
    object in it that is a verdict), or None."""
    try:
        return JudgeVerdict.model_validate_json(text)
    except ValidationError:
        if not lenient:
            return None
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
            return JudgeVerdict.model_validate(value)
        except (ValueError, ValidationError):
            start = text.find("{", start + 1)
    return None


_CLIENTS: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[tuple[str, str, int, float], openai.AsyncOpenAI]
] = weakref.WeakKeyDictionary()


def _client(judge: JudgeConfig, base_url: str, api_key: str) -> openai.AsyncOpenAI:
    # Cached per event loop: httpx connection pools belong to the loop that opened them.
    import openai

    clients = _CLIENTS.setdefault(asyncio.get_running_loop(), {})
    key = (base_url, api_key, judge.max_retries, judge.timeout_s)
    if key not in clients:
        clients[key] = openai.AsyncOpenAI(
            base_url=base_url,
            api_key=api_key,
            max_retries=judge.max_retries,
            timeout=judge.timeout_s,
        )
    return clients[key]


@dataclass
class JudgeCall:
    """What one judge call sent and got back (kept in ``detail.call`` of its first score)."""

    base_url: str
    model: str
    messages: list[dict[str, JsonValue]]
    response_format: dict[str, JsonValue] | None = None
    raw_reply: str = ""
    requests: int = 0
    usage: Usage = field(default_factory=Usage)
    latency_ms: int = 0

    def record(self, grading: Grading) -> dict[str, JsonValue]:
        """``{base_url, model, messages, response_format, raw_reply, requests, input_tokens,
        output_tokens, cost_usd, latency_ms}``; ``cost_usd`` priced with ``grading.pricing``
        (None: no price known)."""
        cost = None
        if grading.pricing is not None:
            from benchbook.eval.pricing import price_usd

            cost = price_usd(grading.pricing, self.model, self.usage)
        return {
            "base_url": self.base_url,
            "model": self.model,
            "messages": cast(JsonValue, self.messages),
            "response_format": self.response_format,
            "raw_reply": self.raw_reply[:MAX_REPLY_CHARS],
            "requests": self.requests,
            "input_tokens": self.usage.input_tokens,
            "output_tokens": self.usage.output_tokens,
            "cost_usd": cost,
            "latency_ms": self.latency_ms,
        }


async def _complete(
    client: openai.AsyncOpenAI, judge: JudgeConfig, call: JudgeCall, structured: bool
) -> str:
    """Send one request of ``call`` (with ``response_format`` when ``structured``); add its
    tokens and latency to ``call``; return the reply's text."""
    import openai
    from openai.types.chat import ChatCompletionMessageParam
    from openai.types.shared_params import ResponseFormatJSONSchema

    chat = cast(list[ChatCompletionMessageParam], call.messages)
    fmt = cast(ResponseFormatJSONSchema, RESPONSE_FORMAT) if structured else openai.omit
    call.requests += 1
    call.response_format = RESPONSE_FORMAT if structured else None
    started = time.monotonic()
    try:
        completion = await client.chat.completions.create(
            model=call.model, messages=chat, temperature=judge.temperature, response_format=fmt
        )
    finally:
        call.latency_ms += round((time.monotonic() - started) * 1000)
    if completion.usage is not None:
        call.usage = Usage(
            input_tokens=call.usage.input_tokens + completion.usage.prompt_tokens,
            output_tokens=call.usage.output_tokens + completion.usage.completion_tokens,
        )
    call.raw_reply = (completion.choices[0].message.content or "") if completion.choices else ""
    return call.raw_reply


async def _ask(
    judge: JudgeConfig, call: JudgeCall, api_key: str, grading: Grading
) -> JudgeVerdict | None:
    """Ask with ``response_format``; on a 400 or a reply that is not a verdict, ask once more
    without it and parse leniently. Returns the verdict or None (the reply is in ``call``);
    raises ``openai.APIError`` for other failures."""
    import openai

    client = _client(judge, call.base_url, api_key)
    try:
        grading.model_calls += 1
        verdict = parse_verdict(await _complete(client, judge, call, True), lenient=False)
        if verdict is not None:
            return verdict
    except openai.BadRequestError:
        pass  # the endpoint does not take response_format: ask in plain text
    grading.model_calls += 1
    return parse_verdict(await _complete(client, judge, call, False), lenient=True)


def _metrics(judge: JudgeConfig, case: Case) -> list[tuple[str, str, str]]:
    """``(kind, item id, metric)`` for every criterion, then every milestone."""
    out = [("criterion", c.id, f"judge:{judge.name}:{c.id}") for c in judge.rubric.criteria]
    for m in case.milestones or []:
        out.append(("milestone", m.id, f"judge:{judge.name}:milestone:{m.id}"))
    return out


def _unscored(judge: JudgeConfig, case: Case, detail: dict[str, JsonValue]) -> list[Score]:
    """One error score per criterion and milestone (fail closed: no verdict is a grader
    error), the first carrying ``detail`` whole (the call record), the others its error."""
    scores = []
    for i, (_, _, metric) in enumerate(_metrics(judge, case)):
        shown = detail if i == 0 else {"error": detail.get("error")}
        scores.append(Score(grader="judge", metric=metric, value=0.0, status="error", detail=shown))
    return scores


def _scores(
    judge: JudgeConfig,
    case: Case,
    verdict: JudgeVerdict,
    cached: bool,
    call: dict[str, JsonValue] | None = None,
) -> list[Score]:
    """One score per criterion, then per milestone; an item the verdict leaves out is an
    error score. ``call`` (the call record) goes into the first score's detail."""
    by_kind = {
        "criterion": {v.id: v for v in verdict.criteria},
        "milestone": {v.id: v for v in verdict.milestones},
    }
    scores: list[Score] = []
    for kind, item_id, metric in _metrics(judge, case):
        item = by_kind[kind].get(item_id)
        if item is None:
            detail: dict[str, JsonValue] = {
                "error": f"the judge gave no verdict for {kind} {item_id!r}"
            }
            scores.append(
                Score(grader="judge", metric=metric, value=0.0, status="error", detail=detail)
            )
        else:
            detail = {"reasoning": item.reasoning, "model": judge.model, "cached": cached}
            scores.append(
                Score(
                    grader="judge",
                    metric=metric,
                    value=1.0 if item.passed else 0.0,
                    # milestones are partial credit: a measurement, not a verdict on the case
                    passed=item.passed if kind == "criterion" else None,
                    detail=detail,
                )
            )
    if call is not None and scores:
        scores[0].detail["call"] = call
    return scores


async def run_judge(
    spec: GraderSpec, submission: Submission, case: Case, grading: Grading
) -> list[Score]:
    """Grade one (case, sample) with the judge model (SPEC H.5).

    Args:
        spec: the ``judge`` grader spec (config: :mod:`benchbook.eval.judge_prompt`).
        submission: the harness's answer and trace (its snapshot diff for repo cases).
        case: the full case: task, ``expected`` and milestones reach the judge.
        grading: secrets (``api_key_secret``), the verdict cache, the pricing table for the
            call's cost, and ``model_calls``, which grows by one per request sent (two when
            the structured request falls back).

    Returns:
        One score per criterion, metric ``judge:<name>:<criterion_id>``, value 1/0 and
        ``passed`` = the verdict; then one per milestone, ``judge:<name>:milestone:<id>``,
        value 1/0, ``passed = None`` (partial credit). All have ``grader = "judge"`` and the
        reasoning in ``detail``; the first has the call record in ``detail.call`` (module
        docstring). Errors are scores with ``status = error`` (a grader error): no
        ``base_url``/``model``, a missing secret, a failed call (the endpoint URL, status and
        the server's message in ``detail.error``), an unparseable reply (the raw reply in
        ``detail.call.raw_reply``), an item left out. Raises ``InvalidInput`` for a malformed
        config (the caller turns it into an error score).
    """
    judge = parse_judge_config(spec.config)
    if not judge.base_url or not judge.model:
        reason = "the judge config needs base_url and model: nothing was judged"
        return _unscored(judge, case, {"error": reason})
    messages = judge_messages(judge, submission, case)
    judge_hash = sha256_hex(canonical_json(spec.model_dump(mode="json")))
    input_hash = sha256_hex(canonical_json({"model": judge.model, "messages": messages}))
    if grading.verdicts is not None:
        hit = grading.verdicts.get(judge_hash, input_hash)
        if hit is not None:
            try:
                return _scores(judge, case, JudgeVerdict.model_validate(hit), cached=True)
            except ValidationError:
                pass  # a stale or foreign cache entry: ask the model again
    api_key = "EMPTY"
    if judge.api_key_secret:
        if judge.api_key_secret not in grading.secrets:
            return _unscored(judge, case, {"error": f"missing secret {judge.api_key_secret}"})
        try:  # right before the call: the key goes only to a host it is bound to
            api_key = secret_for(grading.secrets, judge.api_key_secret, str(judge.base_url))
        except SecretHostRefused as exc:
            return _unscored(judge, case, {"error": str(exc)})
    import openai

    from benchbook.runtime.harnesses.openai_compat import describe_openai_error

    call = JudgeCall(base_url=judge.base_url, model=judge.model, messages=messages)
    try:
        verdict = await _ask(judge, call, api_key, grading)
    except openai.APIError as exc:
        failed: dict[str, JsonValue] = {
            "error": describe_openai_error(exc),
            "call": call.record(grading),
        }
        return _unscored(judge, case, failed)
    if verdict is None:
        error = f"unparseable judge reply from {judge.model} at {judge.base_url}"
        return _unscored(judge, case, {"error": error, "call": call.record(grading)})
    if grading.verdicts is not None:
        grading.verdicts.put(judge_hash, input_hash, verdict.model_dump(mode="json"))
    return _scores(judge, case, verdict, cached=False, call=call.record(grading))


__all__ = ["JudgeCall", "JudgeConfig", "parse_judge_config", "run_judge"]
