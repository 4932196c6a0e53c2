"""A local server speaking the OpenAI chat-completions protocol, for tests.

Use the ``openai_server`` pytest fixture (``tests/openaiserver/fixtures.py``): point the official
``openai`` client at ``openai_server.url`` (``http://127.0.0.1:<port>/v1``), script replies with
``openai_server.reply = fn`` or ``openai_server.set_rules([...])``, failures with
``openai_server.fail_next(n, status)``, and read ``openai_server.requests`` / ``call_count``.
"""

from .server import OpenAIServer, count_tokens, last_user_text, message_text

__all__ = ["OpenAIServer", "count_tokens", "last_user_text", "message_text"]
