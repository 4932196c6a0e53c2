"""Cached judge verdicts, per workspace, keyed by the judge spec's hash and its input's hash."""

from __future__ import annotations

from sqlalchemy import Connection, insert, select

from benchbook.store.tables import judge_verdicts, utcnow


def get_verdict(conn: Connection, workspace: str, judge_hash: str, input_hash: str) -> str | None:
    """A cached judge verdict JSON, or None."""
    stmt = select(judge_verdicts.c.verdict).where(
        judge_verdicts.c.workspace == workspace,
        judge_verdicts.c.judge_hash == judge_hash,
        judge_verdicts.c.input_hash == input_hash,
    )
    value = conn.execute(stmt).scalar()
    return str(value) if value is not None else None


def put_verdict(
    conn: Connection, workspace: str, judge_hash: str, input_hash: str, verdict: str
) -> None:
    """Cache a judge verdict (an existing entry for the key is kept)."""
    if get_verdict(conn, workspace, judge_hash, input_hash) is None:
        conn.execute(
            insert(judge_verdicts).values(
                workspace=workspace,
                judge_hash=judge_hash,
                input_hash=input_hash,
                verdict=verdict,
                created_at=utcnow(),
            )
        )
