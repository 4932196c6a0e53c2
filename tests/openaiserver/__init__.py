"""A local server speaking the OpenAI chat-completions protocol, for tests.

Use the ``openai_server`` pytest fixture (``tests/openaiserver/fixtures.py``): point the official
``openai`` client at ``openai_server.url`` (``http://127.0.0.1:<port>/v1``), script replies with
``openai_server.reply = fn`` or ``openai_server.set_rules([...])`` — tool-calling replies with
``script([tool_call("bash", command="ls"), tool_call("submit", answer="4")])``; failures with
``openai_server.fail_next(n, status)``, and read ``openai_server.requests`` / ``call_count``.
"""

from .server import (
    OpenAIServer,
    ToolCalls,
    count_tokens,
    last_user_text,
    message_text,
    parallel,
    script,
    tool_call,
)

__all__ = [
    "OpenAIServer",
    "ToolCalls",
    "count_tokens",
    "last_user_text",
    "message_text",
    "parallel",
    "script",
    "tool_call",
]
