"""The ``agent`` harness kind (issue 33): Benchbook's own tool-calling agent.

- :mod:`.loop` — the chat-completions loop (:func:`run_agent`), submit and limits;
- :mod:`.tools` — tool schemas and dispatch; :mod:`.files` — the file tools;
- :mod:`.process` — the one place a tool's process starts: the case's sandbox;
- :mod:`.limits` — steps, messages, tokens, time; :mod:`.prompts` — system prompts per env kind;
- :mod:`.browser` — the ``browser`` tool over the case's Chromium (CDP).
"""

from __future__ import annotations

from benchbook.runtime.harnesses.agent.loop import run_agent

__all__ = ["run_agent"]
