"""The ContextBench loader (SPEC I; LOCALIZATION §1; arXiv 2602.05892, ``EuniAI/ContextBench``).

Reads the pinned release table (``contextbench_verified_test.parquet``, verified by sha256) or
any local table of the same columns, and yields one normalized row per instance:

- ``instance_id`` (curated, ``<Bench>__<lang>__<kind>__<type>__<8 hex>``) and
  ``original_inst_id`` (the source benchmark's id) stay two separate identities;
- ``gold_context`` is decoded from its JSON text into ``[{file, start_line, end_line,
  content}]`` and validated (1-based inclusive: ``start_line`` ≥ 1, ``end_line`` ≥
  ``start_line``); exact duplicate spans are reported and dropped;
- paths lose their ``/workspace/<owner>__<repo>__<ver>/`` checkout prefix (Multi-SWE-bench
  rows); a path under ``/workspace/`` outside any checkout (a scratch file) loses ``/workspace/``
  and is reported; dotfiles keep their leading dot (upstream's ``lstrip("./")`` loses it);
- ``repo`` is ``owner/name``, recovered from ``original_inst_id`` when the column has no owner;
- ``f2p`` and ``p2p`` are decoded from JSON text (or the Python list literal of Poly and Pro
  rows).

Loading never clones a repository and never calls a model. Which fields are gold (never sent
to a harness) is the catalog's business (``datasets.catalog.swebench``).
"""

from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from benchbook.contracts import SourceRef
from benchbook.errors import InvalidInput

RELEASE_FILE = "contextbench_verified_test.parquet"
RELEASE_SHA256 = "4b560777bc8ba4061c7afa5f98ca2b5c793d0a32f085f25c5c817db0708b3629"
"""sha256 of ``data/contextbench_verified_test.parquet`` at ``EuniAI/ContextBench``
``2b43909d`` (50 rows)."""

COLUMNS = (
    "instance_id",
    "original_inst_id",
    "repo",
    "language",
    "base_commit",
    "gold_context",
    "patch",
    "test_patch",
    "problem_statement",
    "source",
)
_CHECKOUT = re.compile(r"^/workspace/([^/]+__[^/]+)/")
# `owner__name-<PR number>` or (SWE-bench Pro) `instance_owner__name-<40 hex>[-v<hex>]`
_ORIGINAL = re.compile(
    r"^(?:instance_)?([\w.-]+?)__([\w.-]+)-(?:\d+|[0-9a-f]{40}(?:-v[0-9a-f]+)?)$"
)


@dataclass
class LoadReport:
    """What loading found (counts over the selected rows).

    Attributes:
        rows: rows loaded; ``by_source`` and ``by_language`` split them.
        spans: gold spans before de-duplication; ``spans_kept`` after.
        duplicates: exact duplicate spans dropped; ``duplicate_rows`` the instances that had any.
        dotfiles: gold paths whose file name or a directory starts with ``.``.
        unprefixed_files: ``/workspace/`` paths outside any checkout prefix (scratch files).
        rows_with_hints: rows with a non-empty ``hints_text``.
    """

    rows: int = 0
    spans: int = 0
    spans_kept: int = 0
    duplicates: int = 0
    duplicate_rows: list[str] = field(default_factory=list)
    dotfiles: list[str] = field(default_factory=list)
    unprefixed_files: list[str] = field(default_factory=list)
    rows_with_hints: int = 0
    by_source: dict[str, int] = field(default_factory=dict)
    by_language: dict[str, int] = field(default_factory=dict)

    def lines(self) -> list[str]:
        """The report as short lines for a terminal or an import's notes."""
        return [
            f"contextbench: {self.rows} rows "
            f"(sources {_counts(self.by_source)}; languages {_counts(self.by_language)})",
            f"gold spans: {self.spans} read, {self.duplicates} exact duplicates dropped "
            f"({', '.join(self.duplicate_rows) or 'none'}), {self.spans_kept} kept",
            f"dotfiles kept: {', '.join(self.dotfiles) or 'none'}",
            f"files outside any checkout prefix: {', '.join(self.unprefixed_files) or 'none'}",
            f"rows with hints_text: {self.rows_with_hints}",
        ]


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1]))


def file_sha256(path: Path) -> str:
    """Hex sha256 of the bytes of ``path``."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_release(path: Path, sha256: str = RELEASE_SHA256) -> str:
    """The sha256 of ``path``, which must equal ``sha256``.

    Raises:
        InvalidInput: the file differs from the pinned release (both hashes named).
    """
    actual = file_sha256(path)
    if actual != sha256:
        raise InvalidInput(
            f"{path.name}: sha256 {actual} is not the pinned ContextBench release {sha256}; "
            "pass the release file, or load it as a local table (under another file name)",
            {"file": str(path), "sha256": actual, "expected": sha256},
        )
    return actual


def normalize_path(file: str) -> tuple[str, bool]:
    """``(path relative to the checkout, was it outside any checkout)``.

    ``/workspace/<owner>__<repo>__<ver>/a/b.py`` → ``a/b.py``; ``/workspace/x.js`` → ``x.js``
    (outside); a leading ``./`` is dropped; a leading dot of a dotfile is kept.
    """
    match = _CHECKOUT.match(file)
    if match:
        return file[match.end() :], False
    if file.startswith("/workspace/"):
        return file[len("/workspace/") :], True
    return (file[2:] if file.startswith("./") else file.lstrip("/")), False


def repo_of(repo: str, original_inst_id: str) -> str:
    """``owner/name`` from the ``repo`` column, else from ``original_inst_id``
    (``cli__cli-5973`` → ``cli/cli``, ``instance_ansible__ansible-<sha>-v<sha>`` →
    ``ansible/ansible``); the column as given when neither has an owner."""
    if "/" in repo:
        return repo
    match = _ORIGINAL.match(original_inst_id)
    return f"{match.group(1)}/{match.group(2)}" if match else repo


def _json(value: Any, where: str) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return orjson.loads(value)
    except orjson.JSONDecodeError as exc:
        raise InvalidInput(f"{where}: not valid JSON text ({exc})", {"field": where}) from exc


def decode_tests(value: Any, where: str) -> Any:
    """``f2p``/``p2p``: JSON text (Verified, Multi), or a Python list literal (Poly and Pro rows
    write ``['a', 'b']``); an already decoded value is returned as is.

    Raises:
        InvalidInput: neither JSON nor a Python literal.
    """
    if not isinstance(value, str):
        return value
    try:
        return orjson.loads(value)
    except orjson.JSONDecodeError:
        pass
    try:
        return ast.literal_eval(value)
    except (ValueError, SyntaxError) as exc:
        raise InvalidInput(f"{where}: neither JSON nor a Python literal", {"field": where}) from exc


def decode_gold_context(value: Any, where: str) -> list[dict[str, Any]]:
    """``gold_context`` (JSON text or an already decoded list) → validated span dicts with
    normalized paths, duplicates kept (see :func:`dedupe_spans`).

    Raises:
        InvalidInput: not a list of objects with a string ``file`` and integer lines
            ``start_line`` ≥ 1 and ``end_line`` ≥ ``start_line``; the message names the span.
    """
    spans = _json(value, f"{where}.gold_context")
    if not isinstance(spans, list):
        raise InvalidInput(f"{where}.gold_context: expected a list of spans", {"field": where})
    out = []
    for i, span in enumerate(spans):
        at = f"{where}.gold_context[{i}]"
        if not isinstance(span, dict) or not isinstance(span.get("file"), str):
            raise InvalidInput(f"{at}: a span needs a string 'file'", {"span": at})
        start, end = span.get("start_line"), span.get("end_line")
        if not all(isinstance(n, int) and not isinstance(n, bool) for n in (start, end)):
            raise InvalidInput(f"{at}: start_line and end_line must be integers", {"span": at})
        assert isinstance(start, int) and isinstance(end, int)
        if start < 1 or end < start:
            raise InvalidInput(
                f"{at}: lines {start}-{end} are not 1-based inclusive (start ≥ 1, end ≥ start)",
                {"span": at, "start_line": start, "end_line": end},
            )
        out.append(
            {
                "file": span["file"],
                "start_line": start,
                "end_line": end,
                "content": str(span.get("content") or ""),
            }
        )
    return out


def dedupe_spans(spans: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """Spans without exact duplicates (same file, lines and content), first kept; and how
    many were dropped."""
    seen: set[tuple[str, int, int, str]] = set()
    kept = []
    for s in spans:
        key = (s["file"], s["start_line"], s["end_line"], s["content"])
        if key not in seen:
            seen.add(key)
            kept.append(s)
    return kept, len(spans) - len(kept)


def normalize_row(
    row: dict[str, Any], where: str, report: LoadReport | None = None
) -> dict[str, Any]:
    """One ContextBench row normalized as the module says; ``report`` is updated if given.

    Raises:
        InvalidInput: a required column is missing or empty, or ``gold_context`` is invalid.
    """
    missing = [c for c in COLUMNS if not row.get(c)]
    if missing:
        raise InvalidInput(f"{where}: missing {', '.join(missing)}", {"missing": missing})
    spans = decode_gold_context(row["gold_context"], where)
    kept, dropped = dedupe_spans(spans)
    dotfiles, outside = [], []
    for span in kept:
        path, unprefixed = normalize_path(span["file"])
        span["file"] = path
        if unprefixed:
            outside.append(path)
        if any(part.startswith(".") and part not in (".", "..") for part in path.split("/")):
            dotfiles.append(path)
    out = dict(row)
    out.update(
        repo=repo_of(str(row["repo"]), str(row["original_inst_id"])),
        gold_context=kept,
        f2p=decode_tests(row.get("f2p") or "{}", f"{where}.f2p"),
        p2p=decode_tests(row.get("p2p") or "{}", f"{where}.p2p"),
    )
    if report is not None:
        report.rows += 1
        report.spans += len(spans)
        report.spans_kept += len(kept)
        report.duplicates += dropped
        if dropped:
            report.duplicate_rows.append(str(row["instance_id"]))
        report.dotfiles.extend(p for p in dict.fromkeys(dotfiles) if p not in report.dotfiles)
        report.unprefixed_files.extend(dict.fromkeys(outside))
        report.rows_with_hints += bool(row.get("hints_text"))
        for key, counts in (("source", report.by_source), ("language", report.by_language)):
            counts[str(row[key])] = counts.get(str(row[key]), 0) + 1
    return out


@dataclass(frozen=True)
class Selection:
    """Which rows to keep: by ``sources`` (``Verified``, ``Multi``, ``Poly``, ``Pro``),
    ``languages`` and curated ``ids`` or ``original_ids`` (None keeps all)."""

    sources: frozenset[str] | None = None
    languages: frozenset[str] | None = None
    ids: frozenset[str] | None = None
    original_ids: frozenset[str] | None = None

    def keeps(self, row: dict[str, Any]) -> bool:
        """Whether ``row`` (raw or normalized) is selected."""
        checks = (
            (self.sources, "source"),
            (self.languages, "language"),
            (self.ids, "instance_id"),
            (self.original_ids, "original_inst_id"),
        )
        return all(wanted is None or row.get(key) in wanted for wanted, key in checks)

    def check_found(self, rows: list[dict[str, Any]]) -> None:
        """Raise InvalidInput naming requested ids that no row has (curated and original
        ids are matched against their own column only)."""
        for wanted, key in ((self.ids, "instance_id"), (self.original_ids, "original_inst_id")):
            unknown = sorted((wanted or set()) - {r[key] for r in rows})
            if unknown:
                raise InvalidInput(f"unknown {key} values: {', '.join(unknown)}", {key: unknown})


def read_table(path: Path) -> list[dict[str, Any]]:
    """The rows of a Parquet, JSONL or JSON table (all columns as stored).

    Raises:
        InvalidInput: an unreadable file or an unknown extension.
    """
    suffix = path.suffix.lower()
    try:
        if suffix == ".parquet":
            import pyarrow.parquet as pq

            rows: list[dict[str, Any]] = pq.read_table(path).to_pylist()
            return rows
        if suffix == ".jsonl":
            return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]
        if suffix == ".json":
            data = orjson.loads(path.read_bytes())
            return list(data) if isinstance(data, list) else [data]
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"{path.name}: cannot read the table ({exc})") from exc
    raise InvalidInput(f"{path.name}: ContextBench tables are .parquet, .jsonl or .json")


def load_contextbench(
    path: Path, selection: Selection | None = None, sha256: str | None = RELEASE_SHA256
) -> tuple[list[dict[str, Any]], LoadReport]:
    """Load and normalize a ContextBench table.

    Args:
        path: the release parquet, or a local table of the same columns.
        selection: rows to keep (all when None); unknown requested ids are an error.
        sha256: the pinned release hash the file must have; None loads a local table unpinned.

    Returns:
        ``(rows, report)``: normalized rows in file order and the :class:`LoadReport`.

    Raises:
        InvalidInput: sha256 mismatch, unreadable file, invalid rows (named by row number and
            instance id), unknown selected ids.
    """
    if sha256 is not None:
        check_release(path, sha256)
    selection = selection or Selection()
    report = LoadReport()
    rows = []
    for number, row in enumerate(read_table(path), start=1):
        if selection.keeps(row):
            rows.append(normalize_row(row, f"row {number} ({row.get('instance_id')})", report))
    selection.check_found(rows)
    return rows, report


class ContextBenchSource:
    """A row source (``datasets.sources.base.RowSource``) over a ContextBench table: yields
    normalized rows; ``notes`` is the load report once iteration has finished.

    The sha256 is pinned only for the release file name (:data:`RELEASE_FILE`); any other
    table loads as a local table.
    """

    def __init__(self, path: Path, name: str | None = None) -> None:
        self.path = path
        self.name = name or path.name
        # The sha256 is known before any row is read, so the dataset's provenance records it;
        # a path that is no file is reported by ``rows`` (InvalidInput naming it).
        digest = file_sha256(path) if path.is_file() else None
        self.ref = SourceRef(kind="file", file=self.name, sha256=digest)
        self.total: int | None = None
        self.notes: list[str] = []

    def rows(self) -> Iterator[tuple[int, dict[str, Any]]]:
        """``(row number, normalized row)``; raises InvalidInput like :func:`load_contextbench`."""
        pinned = RELEASE_SHA256 if self.name == RELEASE_FILE else None
        rows, report = load_contextbench(self.path, sha256=pinned)
        self.total = len(rows)
        self.notes = report.lines()
        yield from enumerate(rows, start=1)
