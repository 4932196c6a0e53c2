"""A run's spend caps (SPEC H.4, issue 28): the cap given at start, and the caps given since on
resume or retry, each for the rest of the run, recorded with who set it and when."""

from __future__ import annotations

import math

import orjson

from benchbook.contracts.run import RunSettings
from benchbook.errors import InvalidInput
from benchbook.store import runs as repo
from benchbook.store.tables import utcnow


def current_budget(row: repo.RunRow, settings: RunSettings) -> tuple[float | None, float]:
    """``(cap, spent against it)`` of a run: the last cap given on resume or retry with the
    spend since it was set, else the start settings' cap with the whole spend."""
    caps = orjson.loads(row.budget_caps) if row.budget_caps else []
    if not caps:
        return settings.budget_usd, row.spent_usd
    last = caps[-1]
    return float(last["budget_usd"]), row.spent_usd - float(last.get("spent_before_usd", 0.0))


def with_cap(row: repo.RunRow, budget_usd: float, actor: str) -> str:
    """The run's ``budget_caps`` JSON with a new cap appended (``spent_before_usd``: the spend
    so far, which the new cap does not count)."""
    if not math.isfinite(budget_usd) or budget_usd < 0:
        raise InvalidInput(
            "budget_usd must be a finite number >= 0", {"budget_usd": str(budget_usd)}
        )
    caps = orjson.loads(row.budget_caps) if row.budget_caps else []
    caps.append(
        {
            "budget_usd": budget_usd,
            "set_by": actor,
            "set_at": utcnow().isoformat(),
            "spent_before_usd": row.spent_usd,
        }
    )
    return orjson.dumps(caps).decode()
