"""Benchmark imports (SPEC D, E): list the catalog, preview a source, import it as a version.

An import resolves a recipe (inline ``spec``, registered ``recipe`` or catalog ``benchmark``),
opens its row source (:func:`open_source`), maps rows to cases (``datasets/mapping.py``) and
streams them into ``services.version_storage.store_version`` in one transaction: a bad row
rejects the whole import and stores nothing.
"""

from __future__ import annotations

import os
import tempfile
from array import array
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from benchbook.contracts import Dataset, Provenance, Recipe
from benchbook.contracts.imports import (
    BenchmarkInfo,
    CatalogMatch,
    ImportRequest,
    ImportResult,
    PreviewResult,
)
from benchbook.contracts.registry import RegisterResult
from benchbook.datasets.catalog import get_entry, list_entries
from benchbook.datasets.catalog.entry import FileSourceFactory
from benchbook.datasets.identity import dataset_meta, version_hash
from benchbook.datasets.mapping import CaseBuilder, CaseHook, RowError, case_row, case_rows
from benchbook.datasets.preview import describe_mapping, guess_mapping, union_fields
from benchbook.datasets.recognize import dataset_id_from_name, guess_graders, match_catalog
from benchbook.datasets.sources import json_docs
from benchbook.datasets.sources.base import Row, RowSource
from benchbook.datasets.sources.files import FileSource, guess_format
from benchbook.datasets.sources.folder import FolderSource
from benchbook.datasets.sources.limits import SourceLimits
from benchbook.datasets.spool import CaseRowSpool
from benchbook.datasets.versions import pick_latest
from benchbook.errors import ContentConflict, InvalidInput
from benchbook.services import import_keys, recipes
from benchbook.services.context import Context
from benchbook.services.import_progress import Progress, bounded_rows, counted_rows, no_rows
from benchbook.services.import_progress import source_notes as source_notes
from benchbook.services.import_versions import plan_version as plan_version
from benchbook.services.import_versions import target_version, version_description
from benchbook.services.secrets import resolve_secret
from benchbook.services.validation import parse_model
from benchbook.services.version_storage import store_version
from benchbook.store import datasets as repo
from benchbook.store.engine import truncate_log

if TYPE_CHECKING:
    from benchbook.datasets.sources.hf_hub import HfHub

PREVIEW_ROWS = 20
#: The multipart part that carries an uploaded file (``transports/multipart.FILE_FIELD``).
FILE_PART = "file"


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
        return FileSource(file, format=fmt, json_key=source.json_key, name=file_name, limits=limits)
    if source.kind == "huggingface":
        from benchbook.datasets.sources.hf_files import open_huggingface_source

        return open_huggingface_source(hf_hub_for(ctx), source)
    raise _no_file(plan)


def _no_file(plan: _Plan) -> InvalidInput:
    source = plan.recipe.source
    hint = f" ({source.file})" if source.file else ""
    return InvalidInput(
        f"{plan.recipe.id}: this benchmark reads a local file{hint}: upload it (multipart"
        f" {FILE_PART!r} part) or pass its content as 'text'; the CLI takes --file PATH"
    )


def _check_inline_rows(plan: _Plan, request: ImportRequest, file: Path | None) -> None:
    """An inline ``spec`` reading a file needs the rows in the request (``text`` or a file):
    a rule of the request itself, stated in the OpenAPI document, so InvalidInput (400) rather
    than the ContentConflict a catalog entry or registered recipe needing a file gets."""
    inline = plan.via == "spec" and plan.recipe.source.kind != "huggingface"
    if inline and file is None and request.text is None:
        raise _no_file(plan)


@contextmanager
def source_content() -> Iterator[None]:
    """Around reading a source: its InvalidInput (rows that do not parse or map, no rows, a
    file the recipe reads but none was sent, a file and ``text`` both) becomes
    :class:`~benchbook.errors.ContentConflict` (HTTP 409), message and details kept — the
    request is well formed; what its source holds contradicts it."""
    try:
        yield
    except ContentConflict:
        raise
    except InvalidInput as exc:
        raise ContentConflict(exc.message, exc.details) from exc


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

    Raises:
        ContentConflict: the source does not parse, has no rows, or is a file none was sent
            for (:func:`source_content`).
        NotFound: unknown benchmark or recipe.
    """
    ctx.require("datasets:write")
    plan = _plan(ctx, request)
    limit = min(request.limit or PREVIEW_ROWS, PREVIEW_ROWS)
    _check_inline_rows(plan, request, file)
    with source_content(), _local_file(request, file, file_name) as (path, name):
        source = open_source(ctx, plan, path, name)
        rows = []
        for number, row in source.rows():
            rows.append((number, row))
            if len(rows) >= limit:
                break
        if not rows:
            raise no_rows(source)
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
    built = [json_docs.loads(c) for c in cases]  # big integers stay exact
    matches, suggested = _recognise(plan, fields, rows, name or (path.name if path else None))
    return PreviewResult(
        fields=fields,
        rows=[r for _, r in rows],
        mapping_guess=guess_mapping(fields),
        mapping=mapping,
        cases=built,
        assertion=assertion,
        warnings=warnings,
        total=source.total,
        catalog_matches=matches,
        suggested_id=suggested,
        grader_guess=guess_graders(c.get("expected") for c in built)
        if mapping.answer_field
        else [],
    )


def _recognise(
    plan: _Plan, fields: list[str], rows: list[tuple[int, Row]], name: str | None
) -> tuple[list[CatalogMatch], str]:
    """For an inline spec: the catalog entries the rows match and the suggested dataset id (the
    best match's, else the file or Hugging Face dataset name without extension and split words,
    else the spec's); for a catalog entry or recipe: no matches and its id."""
    if plan.via != "spec":
        return [], plan.recipe.id
    matches = match_catalog(fields, [r for _, r in rows])
    named = dataset_id_from_name(name or plan.recipe.source.dataset)
    return matches, matches[0].benchmark if matches else named or plan.recipe.id


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


#: Local sources at most this big are read whole by :func:`identical_version` (a wizard preview).
IDENTICAL_CHECK_BYTES = 32 * 1024 * 1024


def compare_with_latest(
    ctx: Context,
    request: ImportRequest,
    dataset_id: str,
    file: Path | None = None,
    file_name: str | None = None,
) -> dict[str, Any] | None:
    """Whether importing ``request`` from the local ``file`` would register anything new: its
    cases and metadata compared with the latest live version of ``dataset_id``, as a ``bump``
    import compares them. Writes nothing; reads the whole file.

    Returns:
        ``{"latest": <version>, "identical": bool}``; None when not checked: no file, a file
        over :data:`IDENTICAL_CHECK_BYTES` or a folder, no live version, or a failing row (the
        import will name it).
    """
    ctx.require("datasets:read")
    if file is None or not file.is_file() or file.stat().st_size > IDENTICAL_CHECK_BYTES:
        return None
    workspace = ctx.target_workspace(request.shared)
    with ctx.engine.connect() as conn:
        live = {v.version: v.content_hash for v in repo.live_versions(conn, workspace, dataset_id)}
    latest = pick_latest(list(live))
    if latest is None:
        return None
    plan = _plan(ctx, request)
    builder = CaseBuilder(plan.recipe.mapping, dataset_id, plan.recipe.grader_templates, plan.hook)
    source = open_source(ctx, plan, file, file_name)
    meta = _meta(plan, dataset_id, latest, source, request.limit)
    try:
        pairs = [(cid, h) for cid, _, h in case_rows(source.rows(), builder, request.limit)]
    except InvalidInput:
        return None
    # The content hash covers the metadata with its version: hashed as ``latest``, equal content
    # gives ``latest``'s hash.
    return {"latest": latest, "identical": version_hash(meta, pairs) == live[latest]}


#: Sources read over the network: spooled to disk first (see ``datasets/spool.py``).
REMOTE_SOURCES = frozenset({"huggingface"})


def import_benchmark(
    ctx: Context,
    request: ImportRequest,
    file: Path | None = None,
    progress: Progress | None = None,
    file_name: str | None = None,
    row_worker: bool | None = None,
) -> ImportResult:
    """Import a benchmark source as a dataset version (SPEC E.5).

    Args:
        request: what to import (SPEC E.1).
        file: a local file or folder to read with the recipe's mapping (``--file``); uploads
            pass the saved temporary file and ``file_name``, recorded as ``--file`` of a file
            of that name records it (``source.kind`` ``file``), so the content hash is the same.
        progress: called with rows read / cases built every 1000 rows or 0.25 s and once at the
            end, inside the transaction: raising (``Cancelled``) rolls the import back.
        row_worker: build a local file's rows in a second process (see ``counted_rows``);
            None decides, True/False force it. The stored version is the same either way.

    Returns:
        ``{workspace, id, version, cases, created, identical_to}``; ``created`` is False when the
        identical version already existed. With ``bump``, content equal to the latest version
        (cases matched by id, description, tags, produced_by) registers nothing: the result is
        that version and ``identical_to`` names it.

    Raises:
        PayloadTooLarge: the import would store more than ``import_max_rows`` cases or
            ``import_max_bytes`` bytes of them (naming the setting and the line); nothing is
            stored.
        ContentConflict: what the source holds does not fit the request (:func:`source_content`):
            bad rows (the first failures with row numbers), no rows, templates, duplicate case
            ids, a file the recipe reads but none was sent; nothing is stored.
        InvalidInput: versions (a bump past the largest version).
        Conflict: the version exists with other content.
        NotFound: unknown benchmark or recipe.
    """
    ctx.require("datasets:write")
    plan = _plan(ctx, request)
    dataset_id = request.id or plan.recipe.id
    builder = CaseBuilder(plan.recipe.mapping, dataset_id, plan.recipe.grader_templates, plan.hook)
    version, latest = target_version(ctx, request, dataset_id)
    _check_inline_rows(plan, request, file)
    with source_content(), _local_file(request, file, file_name) as (path, name):
        stamp = _stamp(path)
        source = open_source(ctx, plan, path, name)
        meta = _meta(plan, dataset_id, version, source, request.limit)
        hooks = (plan.hook, plan.file_source)
        key = import_keys.source_key(ctx, plan.recipe, plan.via, hooks, request, source, meta)
        workspace = ctx.target_workspace(request.shared)
        same = None
        if key is not None and (latest or request.bump is None):
            same = import_keys.unchanged_version(ctx, workspace, dataset_id, latest or version, key)
        if same is not None:  # read under this key before: its rows are not built again
            return _result(same, version, source)
        numbers = array("q")  # 8 bytes a case: duplicate ids are reported by file line
        word = "line" if getattr(source, "format", None) in ("csv", "jsonl") else "row"
        with ExitStack() as stack, CaseRowSpool() as spool:
            counter, stream = counted_rows(
                stack, source, builder, request.limit, progress, numbers, row_worker
            )
            stream = bounded_rows(stream, ctx.settings, numbers, word)
            if source.ref.kind in REMOTE_SOURCES:  # fetch before the write lock is taken
                stream = spool.drain(stream).replay()
            try:
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
            except BaseException:
                truncate_log(ctx.engine)  # the rolled-back rows filled SQLite's log
                raise
        if key is not None and stamp is not None and stamp == _stamp(path):  # not rewritten
            import_keys.record_key(ctx, result.workspace, result.id, result.version, key)
    return _result(result, version, source)


def _stamp(path: Path | None) -> tuple[int, int, int] | None:
    """``(inode, size, mtime ns)`` of a file (None: no file): equal before and after an import
    means the file hashed first is the file read."""
    if path is None or not path.is_file():
        return None
    st = path.stat()
    return st.st_ino, st.st_size, st.st_mtime_ns


def _result(result: RegisterResult, version: str, source: RowSource) -> ImportResult:
    """The import's answer for the stored (or identical) version ``result``."""
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
