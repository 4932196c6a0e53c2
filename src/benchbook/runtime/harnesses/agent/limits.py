"""The agent's limits per case: steps, messages, tokens and time (issue 33).

A limit reached ends the case without an answer; the trace's ``limit`` says which
(``steps|messages|tokens|time``) and the case is not an error — it is graded like any
unanswered case, and counted apart from errors.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from benchbook.contracts.harness import AgentConfig
from benchbook.contracts.run import AgentLimit


@dataclass
class Budget:
    """What one case has used of its limits.

    Attributes:
        max_steps, message_limit, token_limit: the config's bounds (None: unbounded).
        deadline: ``time.monotonic()`` past which nothing new starts: the start plus the
            smaller of ``time_limit_s`` and the case's ``timeout_s``.
        steps: model requests made; tokens: input + output tokens of their replies.
    """

    max_steps: int
    message_limit: int | None
    token_limit: int | None
    deadline: float
    steps: int = 0
    tokens: int = 0
    started: float = field(default_factory=time.monotonic)

    @classmethod
    def of(cls, config: AgentConfig, case_timeout_s: float) -> Budget:
        """The budget of one case started now."""
        now = time.monotonic()
        seconds = min(config.time_limit_s or case_timeout_s, case_timeout_s)
        return cls(
            config.max_steps, config.message_limit, config.token_limit, now + seconds, 0, 0, now
        )

    def remaining_s(self) -> float:
        """Seconds left before the deadline (≤ 0 when it passed)."""
        return self.deadline - time.monotonic()

    def before_request(self, messages: int) -> AgentLimit | None:
        """The limit that forbids the next model request, if any (``messages``: the length of
        the conversation the request would carry)."""
        if self.steps >= self.max_steps:
            return "steps"
        if self.message_limit is not None and messages >= self.message_limit:
            return "messages"
        if self.token_limit is not None and self.tokens >= self.token_limit:
            return "tokens"
        if self.remaining_s() <= 0:
            return "time"
        return None
