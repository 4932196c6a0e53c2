"""Reading a dataset version's cases (SPEC B, D): one case by id, a case-id or content search,
a case's neighbours, and the whole version exported as JSONL (streamed, resumable)."""

from __future__ import annotations

import contextlib
from collections.abc import Generator, Iterator

from benchbook.contracts import Case
from benchbook.contracts.dataset import CaseMatch, CaseNeighbours
from benchbook.errors import InvalidInput, NotFound
from benchbook.services.bounds import bounded_int, bounded_search
from benchbook.services.context import Context
from benchbook.services.resolve import resolve_version
from benchbook.store import case_reads

MAX_AFTER = 2**62
"""Largest case cursor ``after`` (far beyond any case count; a power of two, so the OpenAPI
document, whose numbers are floats, states it exactly)."""


def get_case(ctx: Context, dataset_id: str, ref: str, case_id: str) -> Case:
    """One case of a version by its id. Raises NotFound."""
    ctx.require("datasets:read")
    with ctx.engine.connect() as conn:
        row = resolve_version(conn, ctx.workspace, dataset_id, ref)
        body = case_reads.case_by_id(conn, row.pk, case_id)
    if body is None:
        raise NotFound(f"case {case_id!r} not found in {dataset_id}@{row.version}")
    return Case.model_validate_json(body)


def search_cases(
    ctx: Context, dataset_id: str, ref: str, query: str, limit: int = 50
) -> list[CaseMatch]:
    """Up to ``limit`` (1-200) cases of ``dataset_id@ref`` whose id or content (task,
    expected, metadata) contains ``query``, case-insensitively, in version order, each with
    its 0-based position (a substring scan: ~0.1 s at 100k cases). Raises NotFound like
    :func:`get_dataset`, InvalidInput for an empty query, one past 512 characters (path ``q``)
    or a ``limit`` out of range."""
    ctx.require("datasets:read")
    bounded_int(limit, "limit", low=1, high=200)
    needle = (bounded_search(query, "q") or "").strip()
    if not needle:
        raise InvalidInput("search text is empty", {"errors": [{"path": "q", "message": "empty"}]})
    with ctx.engine.connect() as conn:
        row = resolve_version(conn, ctx.workspace, dataset_id, ref)
        found = case_reads.search_case_rows(conn, row.pk, needle, limit)
    return [
        CaseMatch(position=position, case=Case.model_validate_json(body))
        for position, _, body in found
    ]


def get_case_neighbours(ctx: Context, dataset_id: str, ref: str, case_id: str) -> CaseNeighbours:
    """Where ``case_id`` sits in ``dataset_id@ref``: its 0-based position and the previous and
    next case ids (None at either end), for a Previous/Next. Raises NotFound like
    :func:`get_case`."""
    ctx.require("datasets:read")
    with ctx.engine.connect() as conn:
        row = resolve_version(conn, ctx.workspace, dataset_id, ref)
        found = case_reads.case_neighbours(conn, row.pk, case_id)
    if found is None:
        raise NotFound(f"case {case_id!r} not found in {dataset_id}@{row.version}")
    position, previous, following = found
    return CaseNeighbours(position=position, previous=previous, next=following)


def export_dataset(ctx: Context, dataset_id: str, ref: str = "latest") -> Iterator[bytes]:
    """Stream a version's cases as JSONL: one item per case, its canonical JSON (UTF-8) plus
    ``\\n``, in version order.

    Resolution happens before the first line, so NotFound is raised eagerly. The database
    cursor stays open while the iterator is consumed; ``close()`` it to stop early.
    """
    batches = _export_batches(ctx, dataset_id, ref)

    def lines() -> Iterator[bytes]:
        with contextlib.closing(batches):
            for batch in batches:
                for body in batch:
                    yield body + b"\n"

    return lines()


def export_dataset_chunks(
    ctx: Context,
    dataset_id: str,
    ref: str = "latest",
    chunk_bytes: int = 256 * 1024,
    after: int | None = None,
) -> Iterator[bytes]:
    """The bytes of :func:`export_dataset` in chunks of whole lines, each about ``chunk_bytes``
    (sized from the average line of each database batch of 5,000 cases; a longer line is a
    chunk of its own): what a socket is fed, without a Python step per line. The stored
    canonical bodies are sent as they are (validated when written; never parsed here).

    ``after`` (0-based position, as ``get_dataset``'s cursor) starts after that case: a reader
    whose stream dropped resumes with the count of lines it has minus one. Raises NotFound
    eagerly like :func:`export_dataset`, InvalidInput (path ``after``) for a negative cursor or
    one beyond 64 bits."""
    batches = _export_batches(ctx, dataset_id, ref, after)

    def chunks() -> Iterator[bytes]:
        with contextlib.closing(batches):
            for batch in batches:
                per = max(1, len(batch) * chunk_bytes // (sum(map(len, batch)) + len(batch)))
                for start in range(0, len(batch), per):
                    part = batch[start : start + per]
                    part.append(b"")  # the last line's newline
                    yield b"\n".join(part)

    return chunks()


def _export_batches(
    ctx: Context, dataset_id: str, ref: str, after: int | None = None
) -> Generator[list[bytes]]:
    """Resolve ``dataset_id@ref`` now (NotFound, Forbidden, a bad ``after`` raised here); the
    returned generator reads the version's bodies after position ``after`` in batches on its own
    connection."""
    ctx.require("datasets:read")
    if after is not None:
        bounded_int(after, "after", high=MAX_AFTER)
    with ctx.engine.connect() as conn:
        version_pk = resolve_version(conn, ctx.workspace, dataset_id, ref).pk

    start = -1 if after is None else after

    def batches() -> Generator[list[bytes]]:
        with ctx.engine.connect() as conn:
            yield from case_reads.iter_body_batches(conn, version_pk, after=start)

    return batches()
