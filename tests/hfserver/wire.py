"""Replies of the fake server: status, headers and body bytes."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

import orjson


@dataclass
class Reply:
    """One HTTP answer."""

    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


def json_reply(payload: Any, status: int = 200, headers: dict[str, str] | None = None) -> Reply:
    """A JSON reply with the headers both Hugging Face services always send."""
    base = {
        "Content-Type": "application/json",
        "Access-Control-Allow-Origin": "*",
        "X-Request-Id": f"Root=1-{uuid.uuid4().hex[:8]}-{uuid.uuid4().hex[:24]}",
        "Cache-Control": "max-age=120" if status < 400 else "no-store",
    }
    base.update(headers or {})
    return Reply(status, orjson.dumps(payload), base)
