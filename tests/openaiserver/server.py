"""A real HTTP server on 127.0.0.1 speaking the OpenAI chat-completions protocol, for tests.

Routes (under ``/v1``, like the real API root):

- ``POST /v1/chat/completions`` — a ``chat.completion`` object whose assistant text comes from the
  test's reply function or rules; ``usage`` counts whitespace-separated tokens (prompt: every
  message's text; completion: the reply), so the numbers are deterministic.
- ``GET /v1/models`` — ``{object: "list", data: [{id, object: "model", created, owned_by}]}``.

Errors use the API's body shape ``{"error": {message, type, param, code}}``. Request validation
mirrors the API where it matters to callers: ``model`` and a non-empty ``messages`` list are
required, and ``response_format`` must be ``text``, ``json_object`` or ``json_schema`` with a
``json_schema.name`` and ``json_schema.schema``.
"""

from __future__ import annotations

import json
import re
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ReplyFn = Callable[[dict[str, Any]], Any]
"""``(request_json) -> reply``: text, a dict/list sent as its JSON text, or a
:class:`ToolCalls` (an assistant message calling tools)."""


@dataclass(frozen=True)
class ToolCalls:
    """A scripted assistant reply that calls tools (``finish_reason: tool_calls``).

    ``calls`` holds ``(name, arguments)``: a dict sent as its JSON text, or a string sent as
    is (malformed arguments on purpose). ``content`` is the message's optional text.
    """

    calls: tuple[tuple[str, Any], ...]
    content: str | None = None


def tool_call(name: str, arguments: Any = None, /, **kwargs: Any) -> ToolCalls:
    """One tool call: ``tool_call("bash", command="ls")`` or ``tool_call("bash", "{bad")``."""
    return ToolCalls(((name, kwargs if arguments is None else arguments),))


def parallel(*replies: ToolCalls, content: str | None = None) -> ToolCalls:
    """Several tool calls in one assistant message (parallel tool calls)."""
    return ToolCalls(tuple(c for r in replies for c in r.calls), content)


def script(steps: Sequence[Any], after: Any = None) -> ReplyFn:
    """Reply with ``steps[i]`` to a request whose conversation holds ``i`` assistant messages,
    so each case of a run (each conversation) walks the script from its start; past the end,
    ``after`` (default: the last step again). A step may be ``(request_json) -> reply``."""

    def reply(body: dict[str, Any]) -> Any:
        done = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
        step = steps[done] if done < len(steps) else (steps[-1] if after is None else after)
        return step(body) if callable(step) else step

    return reply


DEFAULT_REPLY = "OK"


@dataclass(frozen=True)
class Failure:
    """A scripted failure served instead of a completion."""

    status: int
    retry_after_s: float | None
    message: str


class _Httpd(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # a run opens up to 16 connections at once; 5 would stall accepts

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that gave up (timeout, cancelled retry) closes the socket mid-reply: not a bug.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def message_text(message: dict[str, Any]) -> str:
    """A chat message's text: ``content`` as a string, or its ``text`` parts joined."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def last_user_text(body: dict[str, Any]) -> str:
    """The text of the last ``user`` message of a chat-completions request body ("" if none)."""
    users = [m for m in body.get("messages", []) if isinstance(m, dict) and m.get("role") == "user"]
    return message_text(users[-1]) if users else ""


def count_tokens(text: str) -> int:
    """Deterministic token count: whitespace-separated words."""
    return len(text.split())


def _error(status: int, message: str, kind: str, param: str | None = None) -> tuple[int, Any]:
    return status, {"error": {"message": message, "type": kind, "param": param, "code": None}}


class OpenAIServer:
    """The running server; change its behaviour at any time from the test.

    Attributes:
        reply: ``(request_json) -> text | dict | list`` producing the assistant reply.
        reject_response_format: answer any request carrying ``response_format`` with a 400.
        delay_s: seconds each chat completion waits before answering (timeouts).
        models: the ids listed by ``GET /v1/models``.
        api_key: when set, requests without ``Authorization: Bearer <api_key>`` get a 401.
    """

    def __init__(self) -> None:
        self.reply: ReplyFn = lambda body: DEFAULT_REPLY
        self.reject_response_format = False
        self.delay_s = 0.0
        self.models: list[str] = ["test-model"]
        self.api_key: str | None = None
        self._lock = threading.Lock()
        self._requests: list[dict[str, Any]] = []
        self._headers: list[dict[str, str]] = []
        self._failures: list[Failure] = []
        self._ids = 0
        self._httpd = _Httpd(("127.0.0.1", 0), _handler_for(self))
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    # -- test-facing API ------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The API root to hand to ``openai.AsyncOpenAI(base_url=...)``: ``http://127.0.0.1:<port>/v1``."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def set_rules(self, rules: Sequence[tuple[str, Any]], default: Any = DEFAULT_REPLY) -> None:
        """Reply by the first rule whose regex matches (``re.search``) the last user message.

        A rule's reply is text, a dict/list (sent as JSON), or ``(request_json) -> reply``.
        """
        compiled = [(re.compile(pattern, re.S), reply) for pattern, reply in rules]

        def reply(body: dict[str, Any]) -> Any:
            text = last_user_text(body)
            for pattern, answer in compiled:
                if pattern.search(text):
                    return answer(body) if callable(answer) else answer
            return default(body) if callable(default) else default

        self.reply = reply

    def fail_next(
        self, count: int, status: int = 429, retry_after_s: float | None = 0.01, message: str = ""
    ) -> None:
        """Answer the next ``count`` chat completions with ``status`` instead of a completion.

        ``retry_after_s`` is sent as ``Retry-After`` (seconds) and ``retry-after-ms``; None sends
        neither. The ``openai`` client honours a delay in (0, 60] s and otherwise backs off on its
        own (~0.5 s, doubling), so the default 0.01 keeps tests fast.
        """
        text = message or {429: "Rate limit reached", 500: "The server had an error"}.get(
            status, f"scripted failure {status}"
        )
        with self._lock:
            self._failures.extend([Failure(status, retry_after_s, text)] * count)

    @property
    def requests(self) -> list[dict[str, Any]]:
        """A copy of every chat-completions request body received (failed ones included)."""
        with self._lock:
            return list(self._requests)

    @property
    def request_headers(self) -> list[dict[str, str]]:
        """The headers of each request in :attr:`requests` (lower-cased names)."""
        with self._lock:
            return list(self._headers)

    @property
    def call_count(self) -> int:
        """How many chat-completions requests arrived (failed ones included)."""
        with self._lock:
            return len(self._requests)

    def reset(self) -> None:
        """Forget recorded requests and pending failures; restore the default behaviour."""
        with self._lock:
            self._requests.clear()
            self._headers.clear()
            self._failures.clear()
        self.reply = lambda body: DEFAULT_REPLY
        self.reject_response_format = False
        self.delay_s = 0.0
        self.api_key = None

    def start(self) -> OpenAIServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- protocol -------------------------------------------------------------------------------

    def handle(
        self, method: str, path: str, headers: dict[str, str], raw: bytes
    ) -> tuple[int, Any, dict[str, str]]:
        """Route one request; returns ``(status, json_body, extra_headers)``."""
        path = path.split("?", 1)[0].rstrip("/")
        if self.api_key is not None and headers.get("authorization") != f"Bearer {self.api_key}":
            status, body = _error(401, "Incorrect API key provided", "invalid_request_error")
            return status, body, {}
        if method == "GET" and path == "/v1/models":
            data = [
                {"id": m, "object": "model", "created": 0, "owned_by": "benchbook-tests"}
                for m in self.models
            ]
            return 200, {"object": "list", "data": data}, {}
        if method == "POST" and path == "/v1/chat/completions":
            return self._chat(headers, raw)
        status, body = _error(404, f"Unknown request URL: {method} {path}", "invalid_request_error")
        return status, body, {}

    def _chat(self, headers: dict[str, str], raw: bytes) -> tuple[int, Any, dict[str, str]]:
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            return (*_error(400, "We could not parse the JSON body", "invalid_request_error"), {})
        if not isinstance(body, dict):
            return (*_error(400, "The body must be a JSON object", "invalid_request_error"), {})
        with self._lock:
            self._requests.append(body)
            self._headers.append(headers)
            failure = self._failures.pop(0) if self._failures else None
        if failure is not None:
            return _failure_reply(failure)
        problem = _validate(body, self.reject_response_format)
        if problem is not None:
            return (*problem, {})
        if self.delay_s:
            time.sleep(self.delay_s)
        try:
            answer = self.reply(body)
        except Exception as exc:  # a bug in the test's rule must show up as a 500, not a hang
            return (*_error(500, f"reply rule failed: {exc!r}", "server_error"), {})
        return 200, self._completion(body, answer), {}

    def _completion(self, body: dict[str, Any], answer: Any) -> dict[str, Any]:
        prompt_tokens = sum(count_tokens(message_text(m)) for m in body["messages"])
        with self._lock:
            self._ids += 1
            number = self._ids
        if isinstance(answer, ToolCalls):
            message, completion_tokens = _tool_message(answer, number)
            return _chat_completion(
                body, number, message, "tool_calls", prompt_tokens, completion_tokens
            )
        text = answer if isinstance(answer, str) else json.dumps(answer)
        finish_reason = "stop"
        cap = body.get("max_completion_tokens") or body.get("max_tokens")
        if isinstance(cap, int) and count_tokens(text) > cap:
            text, finish_reason = " ".join(text.split()[:cap]), "length"
        completion_tokens = count_tokens(text)
        message = {"role": "assistant", "content": text, "refusal": None}
        return _chat_completion(
            body, number, message, finish_reason, prompt_tokens, completion_tokens
        )


def _tool_message(reply: ToolCalls, number: int) -> tuple[dict[str, Any], int]:
    """The assistant message of a :class:`ToolCalls` reply and its token count."""
    calls = []
    tokens = count_tokens(reply.content or "")
    for i, (name, arguments) in enumerate(reply.calls):
        text = arguments if isinstance(arguments, str) else json.dumps(arguments)
        tokens += count_tokens(text) + 1
        calls.append(
            {
                "id": f"call_{number:06d}_{i}",
                "type": "function",
                "function": {"name": name, "arguments": text},
            }
        )
    message = {"role": "assistant", "content": reply.content, "refusal": None, "tool_calls": calls}
    return message, tokens


def _chat_completion(
    body: dict[str, Any],
    number: int,
    message: dict[str, Any],
    finish_reason: str,
    prompt_tokens: int,
    completion_tokens: int,
) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-test{number:08d}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body["model"],
        "system_fingerprint": "fp_benchbook_tests",
        "choices": [
            {"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def _failure_reply(failure: Failure) -> tuple[int, Any, dict[str, str]]:
    kind = "rate_limit_error" if failure.status == 429 else "server_error"
    extra: dict[str, str] = {}
    if failure.retry_after_s is not None:
        seconds = failure.retry_after_s
        extra["Retry-After"] = str(int(seconds)) if seconds == int(seconds) else str(seconds)
        extra["retry-after-ms"] = str(int(seconds * 1000))
    return (*_error(failure.status, failure.message, kind), extra)


def _validate(body: dict[str, Any], reject_response_format: bool) -> tuple[int, Any] | None:
    """The 400 the API would give this body, or None."""
    if not isinstance(body.get("model"), str) or not body["model"]:
        return _error(400, "you must provide a model parameter", "invalid_request_error", "model")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return _error(
            400, "'messages' must be a non-empty array", "invalid_request_error", "messages"
        )
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or m.get("role") not in {
            "system",
            "developer",
            "user",
            "assistant",
            "tool",
        }:
            return _error(
                400, f"messages[{i}] has no valid role", "invalid_request_error", f"messages[{i}]"
            )
    problem = _check_tool_messages(messages)
    if problem is not None:
        return _error(400, problem, "invalid_request_error", "messages")
    fmt = body.get("response_format")
    if fmt is None:
        return None
    if reject_response_format:
        return _error(
            400,
            "response_format is not supported by this model",
            "invalid_request_error",
            "response_format",
        )
    kind = fmt.get("type") if isinstance(fmt, dict) else None
    if kind in {"text", "json_object"}:
        return None
    schema = fmt.get("json_schema") if kind == "json_schema" else None
    if not (
        isinstance(schema, dict) and schema.get("name") and isinstance(schema.get("schema"), dict)
    ):
        return _error(400, "invalid response_format", "invalid_request_error", "response_format")
    return None


def _check_tool_messages(messages: list[dict[str, Any]]) -> str | None:
    """The API's rule: an assistant message with ``tool_calls`` is followed by one ``tool``
    message per call id (and a ``tool`` message answers such a call); else the 400's text."""
    pending: set[str] = set()
    for i, m in enumerate(messages):
        if m["role"] == "tool":
            if m.get("tool_call_id") not in pending:
                return (
                    f"messages[{i}]: messages with role 'tool' must be a response to a "
                    "preceding message with 'tool_calls'"
                )
            pending.discard(m["tool_call_id"])
            continue
        if pending:
            return (
                "An assistant message with 'tool_calls' must be followed by tool messages "
                f"responding to each 'tool_call_id'. Missing: {', '.join(sorted(pending))}"
            )
        if m["role"] == "assistant":
            pending = {c.get("id") for c in m.get("tool_calls") or [] if isinstance(c, dict)}
    return None


def _handler_for(server: OpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body leave as separate writes

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            headers = {k.lower(): v for k, v in self.headers.items()}
            try:
                status, body, extra = server.handle(self.command, self.path, headers, raw)
            except Exception as exc:  # a bug in the fake must show up as a 500, not a hang
                status, body, extra = 500, {"error": {"message": f"fake server bug: {exc!r}"}}, {}
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in extra.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._serve()

        def do_POST(self) -> None:
            self._serve()

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Handler
