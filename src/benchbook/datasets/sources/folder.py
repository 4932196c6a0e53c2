"""A folder of JSON task files, one task per file (OSWorld's ``examples/<domain>/<id>.json``).

Rules (documented in ``docs/imports.md``):

- Files are every ``*.json`` below the folder, read in sorted order of their relative POSIX paths
  (``chrome/…`` before ``gimp/…``); row numbers count files from 1.
- Each file holds one JSON object (CRLF line endings and a missing final newline are fine), as
  UTF-8. An empty file, bad JSON (line and column named) or text that is not UTF-8 (line, column
  and byte offset named) is an InvalidInput naming the file's relative path.
- Every row gets ``_file``: its path relative to the folder (lineage for the case).
- When ``id_key`` is given and the same id appears in files of two or more different
  folders (OSWorld lists 11 task ids under both ``chrome/`` and ``thunderbird/``), the id of
  **those rows only** becomes ``<folder>/<id>`` (``chrome/<uuid>``), where ``<folder>`` is the
  file's parent path relative to the root. Unique ids are left alone. A row without the id
  key takes its file stem.
- ``ref.sha256`` is the SHA-256 of the lines ``<relative path> <file sha256>\\n`` in that order, so
  it changes when any file's bytes, name or the set of files change.
"""

from __future__ import annotations

import hashlib
import io
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from benchbook.contracts import SourceRef
from benchbook.datasets.sources import json_docs
from benchbook.datasets.sources.base import Row
from benchbook.datasets.sources.read_errors import (
    bad_input,
    duplicate_key,
    json_error,
    not_utf8,
    read_error,
)
from benchbook.errors import InvalidInput

FILE_KEY = "_file"


def _read(path: Path, rel: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise read_error(rel, exc) from exc


def _load(path: Path, rel: str) -> dict[str, Any]:
    data = _read(path, rel)
    if not data.strip():
        raise bad_input(rel, "the file is empty; expected one JSON object")
    try:
        doc = json_docs.loads(data)  # exact big integers, no repeated key
    except json_docs.DuplicateKey as exc:
        raise duplicate_key(rel, exc) from exc
    except orjson.JSONDecodeError as exc:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            raise not_utf8(rel, io.BytesIO(data)) from exc
        raise json_error(rel, exc) from exc
    if not isinstance(doc, dict):
        raise bad_input(rel, f"expected one JSON object per file, got {type(doc).__name__}")
    return doc


class FolderSource:
    """Rows from a folder of one-task-per-file JSON documents (see the module docstring).

    Raises:
        InvalidInput: the folder holds no ``.json`` file, or a file is not one JSON object.
    """

    def __init__(self, root: Path, id_key: str | None = "id", name: str | None = None) -> None:
        self.root = root
        self.id_key = id_key
        self.paths = sorted(
            (p for p in root.rglob("*.json") if p.is_file()),
            key=lambda p: p.relative_to(root).as_posix(),
        )
        if not self.paths:
            raise InvalidInput(f"{name or root.name}: the folder holds no .json task files")
        self.total: int | None = len(self.paths)
        digest = hashlib.sha256()
        ids: list[tuple[str, str]] = []
        for path in self.paths:
            rel = path.relative_to(root).as_posix()
            data = _read(path, rel)
            digest.update(f"{rel} {hashlib.sha256(data).hexdigest()}\n".encode())
            if id_key is not None:
                ids.append((self._id_of(_load(path, rel), path), self._folder(rel)))
        self.ref = SourceRef(kind="file", file=name or root.name, sha256=digest.hexdigest())
        folders_per_id = Counter(i for i, _ in set(ids))
        self.ambiguous = {i for i, n in folders_per_id.items() if n > 1}

    def _id_of(self, doc: dict[str, Any], path: Path) -> str:
        value = doc.get(self.id_key) if self.id_key else None
        return path.stem if value is None else str(value)

    @staticmethod
    def _folder(rel: str) -> str:
        return rel.rsplit("/", 1)[0] if "/" in rel else "."

    def rows(self) -> Iterator[tuple[int, Row]]:
        """Yield ``(file number, task)`` in sorted path order, ids disambiguated."""
        for number, path in enumerate(self.paths, 1):
            rel = path.relative_to(self.root).as_posix()
            row = _load(path, rel)
            if self.id_key is not None:
                task_id = self._id_of(row, path)
                if task_id in self.ambiguous:
                    task_id = f"{self._folder(rel)}/{task_id}"
                row[self.id_key] = task_id
            row[FILE_KEY] = rel
            yield number, row
