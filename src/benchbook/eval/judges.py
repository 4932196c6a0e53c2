"""Judges (SPEC H.5): a ``judge`` grader's rubric, its prompt, and the model call that grades.

A ``judge`` grader spec's ``config`` holds:

- ``rubric`` — either text (one criterion) or ``{kind, criteria: [{id, description}],
  pass_rule: "all", refusal: bool}``. ``refusal = true`` marks a *refusal-inverted* rubric: the
  case cannot be satisfied, so only a reasoned refusal passes and any concrete plan fails.
- ``scoring`` (optional) — ``{kind: official|proxy, approximates?, official_evaluator?}``: whether
  this rubric is the benchmark's own evaluator or a proxy of it, and which one.
- ``answer_file`` (optional) — the workspace file holding the answer (``plan.md``).
- ``base_url``, ``model`` — the OpenAI-compatible endpoint that judges (without them the judge is
  ``skipped``); ``api_key_secret`` (optional) names the secret holding its key; ``name``
  (default ``judge``) is the judge id in metric names; ``temperature`` (default 0);
  ``max_retries`` (default 2) and ``timeout_s`` (default 120) for the ``openai`` client.

:func:`render_judge_prompt` builds the text the judge receives (task, final answer, a trace
summary, expected, milestones, the repo diff, the criteria and the reply format);
:func:`run_judge` asks the model for JSON (``response_format`` json_schema, falling back to
parsing the first JSON object of a plain reply) and turns its verdicts into scores, caching them
by (judge spec hash, input hash) so that rescoring with an unchanged judge calls no model.
"""

from __future__ import annotations

import asyncio
import json
import weakref
from typing import TYPE_CHECKING, Annotated, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from benchbook.contracts.common import STRICT, HttpUrl, NonEmptyStr
from benchbook.contracts.dataset import Case, GraderSpec
from benchbook.contracts.provenance import Scoring
from benchbook.contracts.score import Score
from benchbook.datasets.identity import canonical_json, sha256_hex
from benchbook.errors import InvalidInput
from benchbook.eval.grading import Grading, Submission
from benchbook.runtime.egress import SecretHostRefused, secret_for

if TYPE_CHECKING:  # ``openai`` (~0.8 s to import) is loaded only when a judge calls a model
    import openai


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
    base_url: HttpUrl | None = None
    model: NonEmptyStr | None = None
    api_key_secret: NonEmptyStr | None = None
    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.\-]+$")] = "judge"
    temperature: Annotated[float, Field(ge=0, le=2)] = 0.0
    max_retries: Annotated[int, Field(ge=0, le=10)] = 2
    timeout_s: Annotated[float, Field(gt=0)] = 120.0


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


JUDGE_SYSTEM = (
    "You are a strict, impartial judge of an AI agent's work. Decide each criterion and milestone "
    "from the evidence given, explain briefly, and reply with JSON only."
)
#: Diffs longer than this (characters) are cut before they reach the judge.
MAX_DIFF_CHARS = 20_000
_ITEM_SCHEMA: dict[str, JsonValue] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["id", "passed", "reasoning"],
    "properties": {
        "id": {"type": "string"},
        "passed": {"type": "boolean"},
        "reasoning": {"type": "string"},
    },
}
#: ``response_format`` of the first request: ``{criteria, milestones, passed}``.
RESPONSE_FORMAT: dict[str, JsonValue] = {
    "type": "json_schema",
    "json_schema": {
        "name": "judge_verdict",
        "strict": True,
        "schema": {
            "type": "object",
            "additionalProperties": False,
            "required": ["criteria", "milestones", "passed"],
            "properties": {
                "criteria": {"type": "array", "items": _ITEM_SCHEMA},
                "milestones": {"type": "array", "items": _ITEM_SCHEMA},
                "passed": {"type": "boolean"},
            },
        },
    },
}


def render_judge_prompt(
    judge: JudgeConfig,
    case: Case,
    final_answer: str,
    *,
    trace_summary: str | None = None,
    diff: str | None = None,
) -> str:
    """The judge's instructions for one case.

    Sections: task, final answer, trace summary (when given), reference, milestones, the
    repository diff (when given; cut at :data:`MAX_DIFF_CHARS`), the refusal rule of a refusal
    rubric, the criteria, and the reply format ``{"criteria": [{"id", "passed", "reasoning"}],
    "milestones": [...], "passed"}``.
    """
    rubric = judge.rubric
    parts = [f"Task given to the agent:\n{case.task}"]
    where = f" (the contents of {judge.answer_file})" if judge.answer_file else ""
    parts.append(f"The agent's final answer{where}:\n{final_answer}")
    if trace_summary:
        parts.append(f"Summary of the agent's trace:\n{trace_summary}")
    from benchbook.eval.graders.verdicts import json_text  # graders/ imports this module

    expected = json_text(case.expected)  # JSON answers reach the judge as JSON, not Python repr
    if expected:
        parts.append(f"Reference (gold) information:\n{expected}")
    if case.milestones:
        lines = [f"- {m.id}: {m.description}" for m in case.milestones]
        parts.append("Milestones:\n" + "\n".join(lines))
    if diff:
        cut = diff[:MAX_DIFF_CHARS]
        more = f"\n[… {len(diff) - len(cut)} more characters cut]" if len(diff) > len(cut) else ""
        parts.append(f"Changes the agent made to the repository (git diff):\n{cut}{more}")
    if rubric.refusal:
        parts.append(
            "This request cannot be satisfied as stated. A concrete plan or answer FAILS; only a "
            "refusal that explains why passes."
        )
    criteria = "\n".join(f"- {c.id}: {c.description}" for c in rubric.criteria)
    parts.append(f"Criteria (the case passes only if all pass):\n{criteria}")
    milestones = (
        '[{"id": <milestone id>, "passed": true|false, "reasoning": <text>}]'
        if case.milestones
        else "[]"
    )
    parts.append(
        'Reply with JSON: {"criteria": [{"id": <criterion id>, "passed": true|false, '
        f'"reasoning": <text>}}], "milestones": {milestones}, "passed": true|false}}.'
    )
    return "\n\n".join(parts)


def added_file_text(diff: str, path: str) -> str | None:
    """The content of ``path`` when ``diff`` (``git diff``) adds it as a new file, else None."""
    lines = diff.splitlines()
    header = f"diff --git a/{path} b/{path}"
    if header not in lines:
        return None
    section: list[str] = []
    for line in lines[lines.index(header) + 1 :]:
        if line.startswith("diff --git "):
            break
        section.append(line)
    if not any(line.startswith("new file mode") for line in section):
        return None
    body: list[str] = []
    in_hunk = False
    for line in section:
        if line.startswith("@@"):
            in_hunk = True
        elif in_hunk and line.startswith("+"):
            body.append(line[1:])
    newline = "" if any(line.startswith("\\ No newline") for line in section) else "\n"
    return "\n".join(body) + newline if body else ""


def judged_answer(judge: JudgeConfig, submission: Submission) -> str:
    """The answer shown to the judge: ``answer_file``'s content when the snapshot diff adds
    it (or the snapshot's output lists it), else the harness's final answer."""
    snapshot = submission.trace.env_snapshot
    if judge.answer_file:
        if snapshot.diff:
            text = added_file_text(snapshot.diff, judge.answer_file)
            if text is not None:
                return text
        if snapshot.output and judge.answer_file in snapshot.output:
            return snapshot.output[judge.answer_file]
    return submission.answer


def trace_summary(submission: Submission, last_messages: int = 3) -> str:
    """A few lines about the trace: status, tool calls, and the last messages (each cut to 400
    characters). Timings and token counts are left out so that the same work judged twice
    sends the same input (and hits the verdict cache)."""
    trace = submission.trace
    lines = [f"status: {submission.status}; tool calls: {len(trace.tool_calls)}"]
    for message in trace.messages[-last_messages:]:
        content = message.get("content")
        text = content if isinstance(content, str) else json.dumps(content)
        lines.append(f"[{message.get('role', '?')}] {text[:400]}")
    return "\n".join(lines)


def judge_messages(
    judge: JudgeConfig, submission: Submission, case: Case
) -> list[dict[str, JsonValue]]:
    """``[system, user]`` sent to the judge for one (case, sample)."""
    diff = submission.trace.env_snapshot.diff if case.env.kind == "repo" else None
    prompt = render_judge_prompt(
        judge,
        case,
        judged_answer(judge, submission),
        trace_summary=trace_summary(submission),
        diff=diff,
    )
    return [{"role": "system", "content": JUDGE_SYSTEM}, {"role": "user", "content": prompt}]


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


async def _ask(
    judge: JudgeConfig,
    base_url: str,
    model: str,
    messages: list[dict[str, JsonValue]],
    api_key: str,
    grading: Grading,
) -> tuple[JudgeVerdict | None, str]:
    """Ask with ``response_format``; on a 400 or a reply that is not a verdict, ask once more
    without it and parse leniently. Returns ``(verdict or None, raw reply)``; raises
    ``openai.APIError`` for other failures."""
    import openai
    from openai.types.chat import ChatCompletionMessageParam
    from openai.types.shared_params import ResponseFormatJSONSchema

    client = _client(judge, base_url, api_key)
    chat = cast(list[ChatCompletionMessageParam], messages)
    structured = cast(ResponseFormatJSONSchema, RESPONSE_FORMAT)
    try:
        grading.model_calls += 1
        completion = await client.chat.completions.create(
            model=model, messages=chat, temperature=judge.temperature, response_format=structured
        )
        raw = (completion.choices[0].message.content or "") if completion.choices else ""
        verdict = parse_verdict(raw, lenient=False)
        if verdict is not None:
            return verdict, raw
    except openai.BadRequestError:
        pass  # the endpoint does not take response_format: ask in plain text
    grading.model_calls += 1
    completion = await client.chat.completions.create(
        model=model, messages=chat, temperature=judge.temperature
    )
    raw = (completion.choices[0].message.content or "") if completion.choices else ""
    return parse_verdict(raw, lenient=True), raw


def _metrics(judge: JudgeConfig, case: Case) -> list[tuple[str, str, str]]:
    """``(kind, item id, metric)`` for every criterion, then every milestone."""
    out = [("criterion", c.id, f"judge:{judge.name}:{c.id}") for c in judge.rubric.criteria]
    for m in case.milestones or []:
        out.append(("milestone", m.id, f"judge:{judge.name}:milestone:{m.id}"))
    return out


def _unscored(
    judge: JudgeConfig,
    case: Case,
    status: Literal["error", "skipped"],
    detail: dict[str, JsonValue],
) -> list[Score]:
    return [
        Score(grader="judge", metric=metric, value=0.0, passed=None, status=status, detail=detail)
        for _, _, metric in _metrics(judge, case)
    ]


def _scores(judge: JudgeConfig, case: Case, verdict: JudgeVerdict, cached: bool) -> list[Score]:
    by_kind = {
        "criterion": {v.id: v for v in verdict.criteria},
        "milestone": {v.id: v for v in verdict.milestones},
    }
    scores: list[Score] = []
    for kind, item_id, metric in _metrics(judge, case):
        item = by_kind[kind].get(item_id)
        if item is None:
            detail: dict[str, JsonValue] = {"error": f"the judge gave no verdict for {item_id!r}"}
            scores.append(
                Score(grader="judge", metric=metric, value=0.0, status="error", detail=detail)
            )
            continue
        scores.append(
            Score(
                grader="judge",
                metric=metric,
                value=1.0 if item.passed else 0.0,
                # milestones are partial credit: a measurement, not a verdict on the case
                passed=item.passed if kind == "criterion" else None,
                detail={"reasoning": item.reasoning, "model": judge.model, "cached": cached},
            )
        )
    return scores


async def run_judge(
    spec: GraderSpec, submission: Submission, case: Case, grading: Grading
) -> list[Score]:
    """Grade one (case, sample) with the judge model (SPEC H.5).

    Args:
        spec: the ``judge`` grader spec (config: module docstring).
        submission: the harness's answer and trace (its snapshot diff for repo cases).
        case: the full case: task, ``expected`` and milestones reach the judge.
        grading: secrets (``api_key_secret``), the verdict cache, and ``model_calls``, which
            grows by one per request sent (two when the structured request falls back).

    Returns:
        One score per criterion, metric ``judge:<name>:<criterion_id>``, value 1/0 and
        ``passed`` = the verdict; then one per milestone, ``judge:<name>:milestone:<id>``,
        value 1/0, ``passed = None`` (partial credit). All have ``grader = "judge"`` and the
        reasoning in ``detail``. Errors are scores with ``status = error``: a missing secret,
        a failed call, or an unparseable reply (the raw reply in ``detail.raw_reply``); no
        ``base_url``/``model`` gives ``skipped`` scores. Raises ``InvalidInput`` for a malformed
        rubric (the caller turns it into an error score).
    """
    judge = parse_judge_config(spec.config)
    if not judge.base_url or not judge.model:
        reason = "judge execution needs base_url and model in the judge config"
        return _unscored(judge, case, "skipped", {"reason": reason})
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
            return _unscored(
                judge, case, "error", {"error": f"missing secret {judge.api_key_secret}"}
            )
        try:  # right before the call: the key goes only to a host it is bound to
            api_key = secret_for(grading.secrets, judge.api_key_secret, str(judge.base_url))
        except SecretHostRefused as exc:
            return _unscored(judge, case, "error", {"error": str(exc)})
    import openai

    # One line per failure, worded as the OpenAI-compatible harness words it (status and the
    # server's message, a timeout, a connection error).
    from benchbook.runtime.harnesses.openai_compat import describe_openai_error

    try:
        verdict, raw = await _ask(judge, judge.base_url, judge.model, messages, api_key, grading)
    except openai.APIError as exc:
        return _unscored(judge, case, "error", {"error": describe_openai_error(exc)})
    if verdict is None:
        detail: dict[str, JsonValue] = {"error": "unparseable judge reply", "raw_reply": raw[:4000]}
        return _unscored(judge, case, "error", detail)
    if grading.verdicts is not None:
        grading.verdicts.put(judge_hash, input_hash, verdict.model_dump(mode="json"))
    return _scores(judge, case, verdict, cached=False)
