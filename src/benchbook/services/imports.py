"""Benchmark imports (SPEC D, E): list the catalog, preview a source, import it as a version.

An import resolves a recipe (inline ``spec``, registered ``recipe`` or catalog ``benchmark``),
opens its row source (:func:`open_source`), maps rows to cases (``datasets/mapping.py``) and
streams them into ``services.datasets.store_version`` in one transaction: a bad row rejects the
whole import and stores nothing.
"""

from __future__ import annotations

import os
import tempfile
import time
from array import array
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from benchbook.contracts import Dataset, Provenance, Recipe
from benchbook.contracts.imports import (
    BenchmarkInfo,
    ImportProgress,
    ImportRequest,
    ImportResult,
    PreviewResult,
)
from benchbook.datasets.catalog import get_entry, list_entries
from benchbook.datasets.catalog.entry import FileSourceFactory
from benchbook.datasets.identity import dataset_meta
from benchbook.datasets.mapping import CaseBuilder, CaseHook, RowError, case_row, case_rows
from benchbook.datasets.preview import describe_mapping, guess_mapping, union_fields
from benchbook.datasets.sources import json_docs
from benchbook.datasets.sources.base import RowSource
from benchbook.datasets.sources.files import FileSource, guess_format
from benchbook.datasets.sources.folder import FolderSource
from benchbook.datasets.sources.limits import SourceLimits
from benchbook.datasets.spool import CaseRowSpool
from benchbook.datasets.versions import bump_version, pick_latest
from benchbook.errors import InvalidInput
from benchbook.services import recipes
from benchbook.services.context import Context
from benchbook.services.datasets import store_version
from benchbook.services.secrets import resolve_secret
from benchbook.services.validation import parse_model
from benchbook.store import datasets as repo
from benchbook.store.datasets import CaseRow

if TYPE_CHECKING:
    from benchbook.datasets.sources.hf_hub import HfHub

PREVIEW_ROWS = 20
#: The multipart part that carries an uploaded file (``api/multipart.FILE_FIELD``).
FILE_PART = "file"
PROGRESS_EVERY = 1000
PROGRESS_INTERVAL_S = 0.25
Progress = Callable[[ImportProgress], None]


@dataclass(frozen=True)
class _Plan:
    """A resolved request: the recipe to apply and how it was reached."""

    recipe: Recipe
    via: Literal["spec", "recipe", "catalog"]
    hook: CaseHook | None = None
    file_source: FileSourceFactory | None = None


def parse_import_request(payload: Any) -> ImportRequest:
    """Validate an import request body; InvalidInput lists every problem by path
    (a ``javascript:`` origin link in an inline spec is ``spec.origin.homepage``)."""
    return parse_model(ImportRequest, payload, "import request")


def list_benchmarks(ctx: Context) -> list[BenchmarkInfo]:
    """The first-party catalog (SPEC F), sorted by id."""
    ctx.require("datasets:read")
    return [e.info() for e in list_entries()]


def get_benchmark(ctx: Context, benchmark: str) -> BenchmarkInfo:
    """One catalog entry. Raises NotFound listing the known ids."""
    ctx.require("datasets:read")
    return get_entry(benchmark).info()


def _plan(ctx: Context, request: ImportRequest) -> _Plan:
    if request.benchmark is not None:
        entry = get_entry(request.benchmark)
        plan = _Plan(entry.recipe, "catalog", entry.hook, entry.file_source)
    elif request.spec is not None:
        plan = _Plan(request.spec, "spec")
    else:
        plan = _Plan(_registered_recipe(ctx, request), "recipe")
    overrides = {k: getattr(request, k) for k in ("split", "config") if getattr(request, k)}
    if overrides:
        source = plan.recipe.source.model_copy(update=overrides)
        recipe = plan.recipe.model_copy(update={"source": source})
        plan = _Plan(recipe, plan.via, plan.hook, plan.file_source)
    return plan


def _registered_recipe(ctx: Context, request: ImportRequest) -> Recipe:
    assert request.recipe is not None
    recipe: Recipe = recipes.get_recipe(ctx, request.recipe.id, request.recipe.version)
    return recipe


def hf_hub_for(ctx: Context) -> HfHub:
    """Hugging Face endpoints from settings, with ``HF_TOKEN`` from the requester's secret, else
    the workspace's, else the environment (``Settings.hf_token``)."""
    from benchbook.datasets.sources.hf_hub import HfHub  # httpx: only for Hugging Face sources

    token = resolve_secret(ctx, "HF_TOKEN") or ctx.settings.hf_token
    return HfHub.from_settings(ctx.settings, token=token)


def open_source(ctx: Context, plan: _Plan, file: Path | None, file_name: str | None) -> RowSource:
    """Pick the row source for a recipe — the one place where sources are wired in.

    A local ``file`` (a file or a one-task-per-file folder) always wins, read with the recipe's
    mapping whatever the recipe's own source kind. Hugging Face sources go through
    ``open_huggingface_source`` (viewer, else raw files) with :func:`hf_hub_for`; other sources
    without a file raise InvalidInput saying how to pass one on every transport (upload, ``text``,
    ``--file``).
    """
    source = plan.recipe.source
    if file is not None:
        if file.is_dir():
            return FolderSource(file, id_key=plan.recipe.mapping.id_field, name=file_name)
        if plan.file_source is not None:  # a benchmark with its own reader (ContextBench)
            return plan.file_source(file, file_name)
        fmt = guess_format(file_name or file.name) or source.format
        limits = SourceLimits.from_settings(ctx.settings)
        src = FileSource(file, format=fmt, json_key=source.json_key, name=file_name, limits=limits)
        if file_name is not None:
            src.ref = src.ref.model_copy(update={"kind": "upload"})
        return src
    where = f"{plan.recipe.id}: "
    if source.kind == "huggingface":
        from benchbook.datasets.sources.hf_files import open_huggingface_source

        return open_huggingface_source(hf_hub_for(ctx), source)
    hint = f" ({source.file})" if source.file else ""
    raise InvalidInput(
        f"{where}this benchmark reads a local file{hint}: upload it (multipart {FILE_PART!r} part)"
        " or pass its content as 'text'; the CLI takes --file PATH"
    )


def _no_rows(source: RowSource) -> InvalidInput:
    """The error for a source that yielded no rows: an import never registers an empty version
    (``register_dataset`` with an explicit empty ``cases`` list still may)."""
    ref = source.ref
    name = ref.file or ref.dataset or "the source"
    if ref.dataset and ref.split:
        name = f"{ref.dataset} ({ref.split})"
    return InvalidInput(
        f"{name} has no rows; nothing imported", {"errors": [{"path": name, "message": "no rows"}]}
    )


@contextmanager
def _local_file(
    request: ImportRequest, file: Path | None, file_name: str | None
) -> Iterator[tuple[Path | None, str | None]]:
    """The file to read: ``file`` as given, or ``request.text`` saved to a temporary file."""
    if request.text is None:
        yield file, file_name
        return
    if file is not None:
        raise InvalidInput("give a file or text, not both")
    suffix = f".{request.format}" if request.format else ".txt"
    fd, tmp = tempfile.mkstemp(prefix="benchbook-upload-", suffix=suffix)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(request.text)
        yield Path(tmp), file_name or f"upload{suffix}"
    finally:
        Path(tmp).unlink(missing_ok=True)


def preview_benchmark_source(
    ctx: Context, request: ImportRequest, file: Path | None = None, file_name: str | None = None
) -> PreviewResult:
    """Read ≤ 20 rows and show how they would import (SPEC E.4); writes nothing.

    Rows that would fail become warnings naming their row number.
    """
    ctx.require("datasets:write")
    plan = _plan(ctx, request)
    limit = min(request.limit or PREVIEW_ROWS, PREVIEW_ROWS)
    with _local_file(request, file, file_name) as (path, name):
        source = open_source(ctx, plan, path, name)
        rows = []
        for number, row in source.rows():
            rows.append((number, row))
            if len(rows) >= limit:
                break
    if not rows:
        raise _no_rows(source)
    mapping = plan.recipe.mapping
    builder = CaseBuilder(
        mapping, request.id or plan.recipe.id, plan.recipe.grader_templates, plan.hook
    )
    assertion, warnings = describe_mapping(mapping, len(plan.recipe.grader_templates))
    cases = []
    for index, (number, row) in enumerate(rows):
        try:
            cases.append(case_row(builder, builder.build(index, row))[1])
        except (RowError, ValueError) as exc:
            warnings.append(f"row {number}: {exc}")
    fields = union_fields(r for _, r in rows)
    return PreviewResult(
        fields=fields,
        rows=[r for _, r in rows],
        mapping_guess=guess_mapping(fields),
        mapping=mapping,
        cases=[json_docs.loads(c) for c in cases],  # big integers stay exact
        assertion=assertion,
        warnings=warnings,
        total=source.total,
    )


def _target_version(
    ctx: Context, request: ImportRequest, dataset_id: str
) -> tuple[str, str | None]:
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
        kind = "uploaded file" if ref.kind == "upload" else ref.kind
        where = f"{kind} {ref.file}" if ref.file else kind
    rows = source.total
    if rows is not None and limit is not None:
        rows = min(rows, limit)
    if rows is not None:
        held = f"{rows:,} row{'' if rows == 1 else 's'} of {where}"
    else:
        held = f"the first {limit:,} rows of {where}" if limit is not None else where
    return " ".join(p for p in (base, f"This version: {held}.") if p)


def _meta(
    plan: _Plan, dataset_id: str, version: str, source: RowSource, limit: int | None
) -> dict[str, Any]:
    recipe = plan.recipe
    provenance = Provenance(
        via=plan.via,
        id=recipe.id,
        version=recipe.version,
        source=source.ref,
        origin=recipe.origin,
        scoring=recipe.scoring,
    )
    payload = {
        "id": dataset_id,
        "version": version,
        "description": version_description(recipe.description, source, limit),
        "produced_by": provenance.model_dump(mode="json"),
    }
    return dataset_meta(parse_model(Dataset, payload, "dataset"))


#: Sources read over the network: spooled to disk first (see ``datasets/spool.py``).
REMOTE_SOURCES = frozenset({"huggingface"})


class _Counter:
    """Rows read and cases built, reported every 1000 rows or, at a 100-row boundary (a viewer
    page), once 0.25 s have passed; and once more when the stream ends, still inside the
    transaction, so a progress callback that raises (a cancelled job) stores nothing."""

    def __init__(self, progress: Progress | None, source: RowSource) -> None:
        self.progress, self.source, self.total = progress, source, source.total
        self.rows = self.cases = 0
        self.reported_at = time.monotonic()

    def on_row(self, rows_read: int, cases_built: int) -> None:
        self.rows, self.cases = rows_read, cases_built
        if self.progress is None:
            return
        if rows_read % PROGRESS_EVERY == 0 or (
            rows_read % 100 == 0 and time.monotonic() - self.reported_at >= PROGRESS_INTERVAL_S
        ):
            self.report()

    def report(self) -> None:
        if self.progress is not None:
            self.reported_at = time.monotonic()
            self.progress(
                ImportProgress(
                    rows_read=self.rows,
                    cases_built=self.cases,
                    total=self.total,
                    notes=source_notes(self.source),
                )
            )

    def track(self, stream: Iterator[CaseRow]) -> Iterator[CaseRow]:
        """``stream`` as is; at its end, InvalidInput when no row was read (rolls back)."""
        yield from stream
        if self.rows == 0:
            raise _no_rows(self.source)
        self.report()


def import_benchmark(
    ctx: Context,
    request: ImportRequest,
    file: Path | None = None,
    progress: Progress | None = None,
    file_name: str | None = None,
) -> ImportResult:
    """Import a benchmark source as a dataset version (SPEC E.5).

    Args:
        request: what to import (SPEC E.1).
        file: a local file or folder to read with the recipe's mapping (``--file``); uploads
            pass the saved temporary file and ``file_name`` (recorded as an ``upload``).
        progress: called with rows read / cases built every 1000 rows or 0.25 s and once at the
            end, inside the transaction: raising (``Cancelled``) rolls the import back.

    Returns:
        ``{workspace, id, version, cases, created, identical_to}``; ``created`` is False when the
        identical version already existed. With ``bump``, content equal to the latest version
        (cases matched by id, description, tags, produced_by) registers nothing: the result is
        that version and ``identical_to`` names it.

    Raises:
        InvalidInput: bad rows (the first failures with row numbers), a source with no rows,
            templates, duplicate case ids, versions; nothing is stored.
        Conflict: the version exists with other content.
        NotFound: unknown benchmark or recipe.
    """
    ctx.require("datasets:write")
    plan = _plan(ctx, request)
    dataset_id = request.id or plan.recipe.id
    builder = CaseBuilder(plan.recipe.mapping, dataset_id, plan.recipe.grader_templates, plan.hook)
    with _local_file(request, file, file_name) as (path, name):
        source = open_source(ctx, plan, path, name)
        version, latest = _target_version(ctx, request, dataset_id)
        meta = _meta(plan, dataset_id, version, source, request.limit)
        counter = _Counter(progress, source)
        numbers = array("q")  # 8 bytes a case: duplicate ids are reported by file line
        stream = case_rows(source.rows(), builder, request.limit, counter.on_row, numbers)
        word = "line" if getattr(source, "format", None) in ("csv", "jsonl") else "row"
        with CaseRowSpool() as spool:
            if source.ref.kind in REMOTE_SOURCES:  # fetch before the write lock is taken
                stream = spool.drain(stream).replay()
            result = store_version(
                ctx,
                dataset_id,
                version,
                meta,
                counter.track(stream),
                request.shared,
                unless_same_as=latest,
                row_numbers=(numbers, word),
            )
    return ImportResult(
        workspace=result.workspace,
        id=result.id,
        version=result.version,
        cases=result.cases,
        created=result.created,
        revived=result.revived,
        content_hash=result.content_hash,
        identical_to=result.version if result.version != version else None,
        notes=source_notes(source),
    )


def source_notes(source: RowSource) -> list[str]:
    """How the source was read when not the plain way (a Hugging Face fallback), in order."""
    return list(getattr(source, "notes", None) or [])
