"""The version an import registers (SPEC E.5): the target version of a request, the plan the
import wizard shows before Import, and the description an imported version carries."""

from __future__ import annotations

from typing import Any

from benchbook.contracts.imports import ImportRequest
from benchbook.datasets.sources.base import RowSource
from benchbook.datasets.versions import bump_version, pick_latest
from benchbook.services.context import Context
from benchbook.store import datasets as repo


def target_version(ctx: Context, request: ImportRequest, dataset_id: str) -> tuple[str, str | None]:
    """``(version to register, latest version a bump must differ from or None)``."""
    if request.version is not None:
        return request.version, None
    workspace = ctx.target_workspace(request.shared)
    with ctx.engine.connect() as conn:
        existing = [v.version for v in repo.live_versions(conn, workspace, dataset_id)]
    if request.bump is not None:
        return bump_version(existing, request.bump), pick_latest(existing)
    return pick_latest(existing) or "1.0.0", None


def plan_version(ctx: Context, request: ImportRequest, dataset_id: str) -> dict[str, Any]:
    """What importing ``request`` as ``dataset_id`` would register, without reading the source
    (the import wizard shows it before Import).

    Returns:
        ``{"latest": <latest live version or None>, "version": <registered without a bump>,
        "bumps": {"patch" | "minor" | "major": <registered with that bump>}}`` (``bumps`` empty
        when the dataset has no version yet). A bump whose cases and metadata equal ``latest``
        registers nothing; that is known only once the source is read (``identical_to``).
    """
    ctx.require("datasets:read")
    workspace = ctx.target_workspace(request.shared)
    with ctx.engine.connect() as conn:
        existing = [v.version for v in repo.live_versions(conn, workspace, dataset_id)]
    latest = pick_latest(existing)
    bumps: dict[str, str] = {}
    if existing:
        bumps = {b: bump_version(existing, b) for b in ("patch", "minor", "major")}
    return {"latest": latest, "version": request.version or latest or "1.0.0", "bumps": bumps}


def version_description(base: str | None, source: RowSource, limit: int | None) -> str:
    """The description of an imported version: the recipe's (what the benchmark is) and what
    this version holds: ``This version: file train.first300.jsonl.``, with the row count when
    the source knows it upfront (Parquet, folders, Hugging Face splits) capped by ``limit``
    (``1,319 rows of Hugging Face openai/gsm8k (main, test)``), else ``the first 5 rows of``
    with a ``limit``. Catalog descriptions therefore name no row counts of their own."""
    ref = source.ref
    if ref.kind == "huggingface":
        parts = ", ".join(p for p in (ref.config, ref.split) if p)
        where = f"Hugging Face {ref.dataset}" + (f" ({parts})" if parts else "")
    else:
        where = f"{ref.kind} {ref.file}" if ref.file else ref.kind
    rows = source.total
    if rows is not None and limit is not None:
        rows = min(rows, limit)
    if rows is not None:
        held = f"{rows:,} row{'' if rows == 1 else 's'} of {where}"
    else:
        held = f"the first {limit:,} rows of {where}" if limit is not None else where
    return " ".join(p for p in (base, f"This version: {held}.") if p)
