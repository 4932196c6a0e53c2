"""The import path under measurement, and the same row pipeline without storage.

When ``benchbook.services.imports.import_benchmark`` exists, the benchmark imports through it
(the path ``benchbook import gsm8k --file`` runs). Otherwise it streams rows into
``store_version`` itself: orjson per line, one ``Case`` per row, canonical body, sha256.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson

from benchbook.contracts import Case
from benchbook.contracts.dataset import PromptEnv
from benchbook.datasets.identity import case_body, sha256_hex

Importer = Callable[[Any, Path, str, str], dict[str, Any]]


def gsm8k_case_rows(path: Path) -> Iterator[tuple[str, bytes, str]]:
    """``(id, canonical body, sha256)`` per line: positional id, task = question,
    expected = the text after ``####``, the full answer kept in metadata."""
    with path.open("rb") as f:
        for i, line in enumerate(f):
            row = orjson.loads(line)
            answer = row["answer"]
            case = Case(
                id=str(i),
                env=PromptEnv(),
                task=row["question"],
                expected=answer.rsplit("####", 1)[-1].strip(),
                metadata={"answer": answer},
            )
            body = case_body(case)
            yield case.id, body, sha256_hex(body)


def _has_import_benchmark() -> bool:
    try:
        mod = importlib.import_module("benchbook.services.imports")
    except ImportError:
        return False
    return hasattr(mod, "import_benchmark")


def path_name() -> str:
    """Which path is measured, for the report."""
    if _has_import_benchmark():
        return "services.imports.import_benchmark (catalog gsm8k mapping, local file)"
    return "services.datasets.store_version (bench-built GSM8K rows)"


def _store_version(ctx: Any, path: Path, dataset_id: str, version: str) -> dict[str, Any]:
    from benchbook.services.datasets import store_version

    meta: dict[str, Any] = {"id": dataset_id, "version": version, "description": None}
    meta.update(tags=[], produced_by=None)
    r = store_version(ctx, dataset_id, version, meta, gsm8k_case_rows(path))
    return {"rows": r.cases, "created": r.created}


def _import_benchmark(ctx: Any, path: Path, dataset_id: str, version: str) -> dict[str, Any]:
    from benchbook.contracts.imports import ImportRequest
    from benchbook.services.imports import import_benchmark

    request = ImportRequest(benchmark="gsm8k", id=dataset_id, version=version)
    r = import_benchmark(ctx, request, file=path)
    return {"rows": r.cases, "created": r.created}


def importer() -> Importer:
    """The import function to time: ``(ctx, path, id, version) -> {rows, created}``."""
    return _import_benchmark if _has_import_benchmark() else _store_version


def case_hashes(path: Path) -> Iterator[str]:
    """The case hashes the import path would compute for ``path`` (nothing stored): the same
    source, mapping and canonical bodies as ``import_benchmark``, without a database. Modules
    are imported and the mapping compiled before this returns, so timing the iteration times
    only the per-row work."""
    if not _has_import_benchmark():
        return (h for _, _, h in gsm8k_case_rows(path))
    from benchbook.datasets.catalog import get_entry
    from benchbook.datasets.mapping import CaseBuilder, case_rows
    from benchbook.datasets.sources.files import FileSource

    entry = get_entry("gsm8k")
    recipe = entry.recipe
    builder = CaseBuilder(recipe.mapping, "gsm8k-bench", recipe.grader_templates, entry.hook)
    source = FileSource(path, format="jsonl", json_key=recipe.source.json_key)
    return (h for _, _, h in case_rows(source.rows(), builder))
