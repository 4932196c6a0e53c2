"""The judge-verdict cache a run's (or a rescore's) grading reads and fills: verdicts stored per
workspace, keyed by the judge spec's hash and its input's hash, so an unchanged judge on an
unchanged input is never asked twice."""

from __future__ import annotations

import contextlib

import orjson
from pydantic import JsonValue
from sqlalchemy import Engine
from sqlalchemy.exc import IntegrityError

from benchbook.store import judge_verdicts as repo


class StoreVerdictCache:
    """Judge verdicts cached in the store, per workspace."""

    def __init__(self, engine: Engine, workspace: str) -> None:
        self.engine, self.workspace = engine, workspace

    def get(self, judge_hash: str, input_hash: str) -> dict[str, JsonValue] | None:
        with self.engine.connect() as conn:
            text = repo.get_verdict(conn, self.workspace, judge_hash, input_hash)
        if text is None:
            return None
        value: dict[str, JsonValue] = orjson.loads(text)
        return value

    def put(self, judge_hash: str, input_hash: str, verdict: dict[str, JsonValue]) -> None:
        with contextlib.suppress(IntegrityError), self.engine.begin() as conn:
            repo.put_verdict(
                conn, self.workspace, judge_hash, input_hash, orjson.dumps(verdict).decode()
            )
