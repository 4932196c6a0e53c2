"""The ``openai`` harness kind (SPEC H.1): one chat completion per (case, sample).

Any OpenAI-compatible chat-completions endpoint is called through the official ``openai`` client
(its retries honour ``Retry-After`` on 429 and back off on 5xx). The request is an optional system
message plus one user message holding the task — for a ``prompt`` environment with ``context``,
the context, a blank line, then the task. Every failure becomes data: ``RuntimeResult(status=
"error", error=...)`` with ``timeout``, ``missing secret NAME`` or ``openai: <status> <reason>:
<message>``; this module never raises for a failed call.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import openai
from pydantic import JsonValue

from benchbook.contracts.harness import OpenAIHarness
from benchbook.contracts.run import CaseInput, RuntimeResult, Trace, Usage
from benchbook.runtime.egress import SecretHostRefused, secret_for

if TYPE_CHECKING:
    from benchbook.runtime.environments import Workspace

_ClientKey = tuple[str, str, int, float]
# httpx connection pools belong to the event loop that opened them, so clients are cached per
# loop; a new client per case would redo the connection setup for every request.
_CLIENTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[_ClientKey, openai.AsyncOpenAI]]
_CLIENTS = weakref.WeakKeyDictionary()


def openai_client(
    base_url: str, api_key: str, max_retries: int, timeout_s: float
) -> openai.AsyncOpenAI:
    """The running loop's shared client for ``(base_url, api_key, max_retries, timeout_s)``.

    Must be called inside a running event loop (raises ``RuntimeError`` otherwise).
    """
    loop = asyncio.get_running_loop()
    clients = _CLIENTS.setdefault(loop, {})
    key = (base_url, api_key, max_retries, float(timeout_s))
    client = clients.get(key)
    if client is None:
        client = openai.AsyncOpenAI(
            base_url=base_url, api_key=api_key, max_retries=max_retries, timeout=timeout_s
        )
        clients[key] = client
    return client


def describe_openai_error(exc: BaseException) -> str:
    """One line for a failed call of a harness or a judge, naming what failed and where:
    ``openai: 500 Internal Server Error: <server message> (POST <url>)``,
    ``openai: request timed out (POST <url>)``, ``openai: connection error: … (POST <url>)``
    or ``openai: <Type>: …``. The URL is the request's, without credentials or query (keys
    travel in headers)."""
    where = ""
    request = getattr(exc, "request", None)
    if isinstance(exc, openai.APIError) and request is not None:
        url = request.url.copy_with(userinfo=b"", query=None, fragment=None)
        where = f" ({request.method} {url})"
    if isinstance(exc, openai.APIStatusError):
        body = exc.body
        message = body.get("message") if isinstance(body, dict) else None
        reason = exc.response.reason_phrase
        return f"openai: {exc.status_code} {reason}: {message or exc.message}{where}"
    if isinstance(exc, openai.APITimeoutError):
        return f"openai: request timed out{where}"
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__
        return f"openai: connection error: {cause or exc}{where}"
    return f"openai: {type(exc).__name__}: {exc}{where}"


def build_messages(harness: OpenAIHarness, case_input: CaseInput) -> list[dict[str, JsonValue]]:
    """``[system?, user]`` for one case; the user message is ``context\\n\\ntask`` for a prompt
    environment with context, else the task."""
    config = harness.config
    messages: list[dict[str, JsonValue]] = []
    if config.system:
        messages.append({"role": "system", "content": config.system})
    context = getattr(case_input.env, "context", None) if case_input.env.kind == "prompt" else None
    task = f"{context}\n\n{case_input.task}" if context else case_input.task
    messages.append({"role": "user", "content": task})
    return messages


async def run_openai(
    harness: OpenAIHarness,
    case_input: CaseInput,
    workspace: Workspace,
    secrets: Mapping[str, str],
) -> RuntimeResult:
    """Run one (case, sample) as a single chat completion.

    Args:
        harness: the ``openai`` harness (its config: endpoint, model, sampling, retries).
        case_input: the case as the runtime sees it; ``timeout_s`` (seconds) bounds the whole
            call, the client's retries included.
        workspace: the case environment (unused by this kind: the model sees only text).
        secrets: secret values by name; ``config.api_key_secret`` is looked up here (without
            it the key ``"EMPTY"`` is sent).

    Returns:
        ``ok`` with a trace of ``messages`` (request + assistant reply), ``usage``
        (``prompt_tokens`` → ``input_tokens``, ``completion_tokens`` → ``output_tokens``; 0
        when the reply has no ``usage``), ``model`` (the configured one, for pricing),
        ``started_at`` (UTC), ``duration_ms``, ``answer`` (the reply text) and a ``note`` event
        (the reply's ``id``, ``served_model``, ``finish_reason``); or ``error`` with
        ``timeout``, ``missing secret NAME``, ``openai: …`` (:func:`describe_openai_error`) or
        ``openai: the reply …`` (no choices, not a chat completion). Never raises for a failed
        call.
    """
    config = harness.config
    started_at = datetime.now(UTC)
    start_s = time.perf_counter()
    messages = build_messages(harness, case_input)
    outcome = await _complete(harness, messages, case_input.timeout_s, secrets)
    duration_ms = int((time.perf_counter() - start_s) * 1000)
    base = {"model": config.model, "started_at": started_at, "duration_ms": duration_ms}
    if isinstance(outcome, str):
        return RuntimeResult(status="error", error=outcome, trace=Trace(messages=messages, **base))
    answer, usage, note = outcome
    trace = Trace(
        messages=[*messages, {"role": "assistant", "content": answer}],
        usage=usage,
        answer=answer,
        events=[note],
        **base,
    )
    return RuntimeResult(status="ok", trace=trace)


Reply = tuple[str, Usage, dict[str, JsonValue]]
"""``(answer, usage, note event)`` of a chat completion."""


async def _complete(
    harness: OpenAIHarness,
    messages: list[dict[str, JsonValue]],
    timeout_s: float,
    secrets: Mapping[str, str],
) -> Reply | str:
    """The completion's answer, usage and note, or why there is none.

    The request goes through the client's generic ``post`` (its retries, timeouts, auth and
    error types, as ``chat.completions.create``), with the body as JSON-ready dicts: the
    typed-parameter transform and the response model ``create`` adds cost more CPU per case
    than the rest of a run (``bench/openai_harness.py``) and change nothing for text chat.
    """
    config = harness.config
    api_key = "EMPTY"
    if config.api_key_secret:
        if config.api_key_secret not in secrets:
            return f"missing secret {config.api_key_secret}"
        try:  # right before the call: the key goes only to a host it is bound to
            api_key = secret_for(secrets, config.api_key_secret, str(config.base_url))
        except SecretHostRefused as exc:
            return str(exc)
    client = openai_client(config.base_url, api_key, config.max_retries, config.timeout_s)
    request: dict[str, Any] = {"model": config.model, "messages": messages}
    if config.temperature is not None:
        request["temperature"] = config.temperature
    if config.max_tokens is not None:
        request["max_tokens"] = config.max_tokens
    if config.extra_body:  # merged last, as the client merges ``extra_body``
        request.update(config.extra_body)
    try:
        async with asyncio.timeout(timeout_s):
            body = await client.post(
                "/chat/completions", body=request, cast_to=object, options=_OPTIONS
            )
    except TimeoutError:
        return "timeout"
    except Exception as exc:  # any failure of the endpoint is the case's result, not a crash
        return describe_openai_error(exc)
    return read_reply(body)


# What ``chat.completions.create`` sends with its requests: the bearer key only.
_OPTIONS: openai.RequestOptions = {"security": {"bearer_auth": True}}


def read_reply(body: object) -> Reply | str:
    """``(answer, usage, note)`` of a chat-completion body (parsed JSON), or why it is not
    one: ``openai: the reply has no choices`` or ``openai: the reply is not a chat
    completion: <what is wrong>``. The answer is the first choice's ``message.content``
    ("" when null); usage tokens are 0 without ``usage``."""
    if not isinstance(body, dict):
        return f"openai: the reply is not a chat completion: {str(body)[:200]!r}"
    choices = body.get("choices")
    if not choices or not isinstance(choices, list):
        return "openai: the reply has no choices"
    choice = choices[0]
    message = choice.get("message") if isinstance(choice, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(message, dict) or not isinstance(content, str | None):
        return "openai: the reply is not a chat completion: choices[0].message.content is not text"
    usage = body.get("usage")
    tokens: tuple[object, object] = (0, 0)
    if usage is not None:
        got = usage if isinstance(usage, dict) else {}
        tokens = (got.get("prompt_tokens"), got.get("completion_tokens"))
    if not all(_count(n) for n in tokens):
        return f"openai: the reply is not a chat completion: usage is {usage!r}"
    note: dict[str, JsonValue] = {
        "type": "note",
        "id": body.get("id"),
        "served_model": body.get("model"),
        "finish_reason": choice.get("finish_reason"),
    }
    input_tokens, output_tokens = tokens
    assert isinstance(input_tokens, int) and isinstance(output_tokens, int)  # _count
    return content or "", Usage(input_tokens=input_tokens, output_tokens=output_tokens), note


def _count(n: object) -> bool:
    return isinstance(n, int) and not isinstance(n, bool) and n >= 0
