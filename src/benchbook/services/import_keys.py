"""Identical re-imports decided from the import key, without reading rows (issue 32).

:func:`source_key` computes the key of an import from a local file (``datasets/import_key.py``);
:func:`unchanged_version` answers whether a live version was already imported under it, and
:func:`record_key` records it once an import has stored (or found identical) its version.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from sqlalchemy.exc import IntegrityError

from benchbook.contracts import Recipe
from benchbook.contracts.imports import ImportRequest
from benchbook.contracts.registry import RegisterResult
from benchbook.datasets.import_key import import_key
from benchbook.datasets.sources.base import RowSource
from benchbook.datasets.sources.limits import SourceLimits
from benchbook.services.context import Context
from benchbook.store import datasets as repo
from benchbook.store import version_sources


def source_key(
    ctx: Context,
    recipe: Recipe,
    via: str,
    hooks: tuple[Any, Any],
    request: ImportRequest,
    source: RowSource,
    meta: dict[str, Any],
) -> str | None:
    """The import key of reading ``source`` with ``recipe`` (``hooks``: the catalog entry's
    case hook and file reader, or None), or None when there is none: the source is not one
    local file whose sha256 was taken (a folder, Hugging Face), or a part cannot be read. The
    import's size bounds (``import_max_rows``, ``import_max_bytes``) are options too: a file
    a full import would now refuse is never accepted from its key."""
    ref = source.ref
    if ref.kind != "file" or not ref.sha256:
        return None
    limits = getattr(source, "limits", None)
    bounds = dataclasses.asdict(limits) if isinstance(limits, SourceLimits) else None
    options = {
        "limit": request.limit,
        "format": request.format,
        "source_format": getattr(source, "format", None),
        "limits": bounds,
        "import_max": [ctx.settings.import_max_rows, ctx.settings.import_max_bytes],
    }
    return import_key(
        meta=meta,
        recipe=recipe.model_dump(mode="json"),
        via=via,
        options=options,
        hook=hooks[0],
        file_reader=hooks[1],
    )


def unchanged_version(
    ctx: Context, workspace: str, dataset_id: str, version: str, key: str
) -> RegisterResult | None:
    """``dataset_id@version`` (created False) when it is live and was imported under ``key``,
    else None (the import reads its rows)."""
    with ctx.engine.connect() as conn:
        row = repo.find_version(conn, workspace, dataset_id, version)
        if row is None or not row.live or not version_sources.has_import_key(conn, row.pk, key):
            return None
    return RegisterResult(
        workspace=workspace,
        id=dataset_id,
        version=row.version,
        created=False,
        cases=row.case_count,
        content_hash=row.content_hash,
    )


def record_key(ctx: Context, workspace: str, dataset_id: str, version: str, key: str) -> None:
    """Record ``key`` for ``dataset_id@version`` (a concurrent import recording it first is
    fine: the row is the same)."""
    try:
        with ctx.engine.begin() as conn:
            row = repo.find_version(conn, workspace, dataset_id, version)
            if row is not None:
                version_sources.add_import_key(conn, row.pk, key)
    except IntegrityError:
        pass
