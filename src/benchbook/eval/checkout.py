"""A read-only view of a repository at its base commit, for scoring (SPEC I).

Metrics need the files as they were before the harness touched anything: bytes, line offsets
and tree-sitter definitions (:mod:`benchbook.datasets.symbols`), and predicted paths resolved
by suffix (LOCALIZATION §4). Everything is cached per file.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from benchbook.datasets.gold import tree_from_dir, tree_from_git
from benchbook.datasets.symbols import Definition, definitions

Interval = tuple[int, int]
"""Inclusive ``(start, end)``: lines (1-based) or bytes (0-based)."""


class Checkout:
    """The repository at the base commit, read-only: file bytes, line offsets, definitions.

    ``read(path) → bytes | None`` gives a file's content (None when absent); results are cached.
    """

    def __init__(self, read: Callable[[str], bytes | None]) -> None:
        self._read = read
        self._bytes: dict[str, bytes | None] = {}
        self._starts: dict[str, list[int]] = {}
        self._defs: dict[str, list[Definition]] = {}

    @classmethod
    def from_dir(cls, root: Path) -> Checkout:
        """A checkout read from the working tree at ``root``."""
        return cls(tree_from_dir(root))

    @classmethod
    def from_git(cls, repo: Path, commit: str) -> Checkout:
        """A checkout read from the blobs of ``commit`` in the local repository ``repo``
        (unaffected by edits in its working tree)."""
        return cls(tree_from_git(repo, commit))

    def content(self, path: str) -> bytes | None:
        """The bytes of ``path``, None when it is not a file of the checkout."""
        if path not in self._bytes:
            self._bytes[path] = self._read(path) if path and not path.endswith("/") else None
        return self._bytes[path]

    def exists(self, path: str) -> bool:
        """Whether ``path`` is a file of the checkout."""
        return self.content(path) is not None

    def line_starts(self, path: str) -> list[int]:
        """Byte offset of the start of each line (index 0 = line 1) of an existing file."""
        if path not in self._starts:
            data = self.content(path) or b""
            starts = [0]
            pos = data.find(b"\n")
            while pos != -1:
                starts.append(pos + 1)
                pos = data.find(b"\n", pos + 1)
            self._starts[path] = starts
        return self._starts[path]

    def definitions(self, path: str) -> list[Definition]:
        """Definitions of an existing code file (``[]`` otherwise)."""
        if path not in self._defs:
            data = self.content(path)
            self._defs[path] = definitions(path, data) if data else []
        return self._defs[path]

    def byte_span(self, path: str, start_line: int, end_line: int) -> Interval | None:
        """Lines ``start_line..end_line`` (1-based inclusive) as an inclusive byte range
        (newline included), clamped to the file; None when the file is missing or the lines
        lie past its end."""
        data = self.content(path)
        if data is None:
            return None
        starts = self.line_starts(path)
        if start_line > len(starts) or start_line > end_line:
            return None
        end = starts[end_line] - 1 if end_line < len(starts) else len(data) - 1
        start = starts[start_line - 1]
        return (start, end) if end >= start else None

    def resolve(self, path: str) -> str | None:
        """A predicted path resolved by suffix against the checkout, or None."""
        parts = path.strip().removeprefix("./").lstrip("/").split("/")
        for i in range(len(parts)):
            candidate = "/".join(parts[i:])
            if candidate and self.exists(candidate):
                return candidate
        return None
