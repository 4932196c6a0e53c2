"""Gold locations from a unified diff (SPEC I, LOCALIZATION §3).

:func:`patch_lines` reads a patch alone (files and changed line ranges, no repository);
:func:`gold_locations` adds the enclosing definitions before and after the change from the base
tree. Both are pure functions of their inputs: the base tree is a callable ``path → bytes | None``
(the file's content at the base commit, None when absent), see :func:`tree_from_dir` and
:func:`tree_from_git`. The patched tree is rebuilt from the base file and the hunks in memory —
nothing is written or cloned.

Rules (each one a peer defect avoided):

- only removed lines (old numbering) and added lines (new numbering) count, never context lines;
  they merge into 1-based inclusive ranges when adjacent or overlapping;
- ``+++ /dev/null`` ends a file (deleted); ``a/``/``b/`` prefixes and a trailing TAB with a
  timestamp are not part of a path; CRLF patches are read as LF; ``\\ No newline at end of file``
  is not a line; ``-U0`` hunks (``@@ -10,0 +11,2 @@``) are exact;
- every file touched is a location: a rename pairs ``old_path`` with ``path`` (a pure rename has
  no hunks), a binary patch, a non-code file, a file in an unsupported language and a
  module-level edit (a changed line outside every definition) give a *file-level* location;
- an insertion (added lines) is located in the **base** file too: ``inserted`` holds the base
  line each added block follows (line 1 for a block at the top), ``enclosing`` the whole base
  lines of the definition the added lines sit in (the innermost patched definition, or its
  nearest enclosing definition that already exists at base) — SPEC I, so an add-only patch has
  line-level gold at the base commit;
- a hunk must have exactly as many lines as its header says: more or fewer is an error quoting
  the header (unidiff silently drops an extra line).
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from unidiff.errors import UnidiffParseError
from unidiff.patch import PatchedFile, PatchSet

from benchbook.datasets.symbols import Definition, definitions, innermost, language_of
from benchbook.errors import InvalidInput

BaseTree = Callable[[str], bytes | None]
"""``path → content at the base commit`` (None when the file does not exist there)."""

FileStatus = Literal["added", "deleted", "modified", "renamed"]
SymbolChange = Literal["added", "deleted", "modified"]


@dataclass(frozen=True)
class LineRange:
    """Lines ``start``..``end``, 1-based inclusive."""

    start: int
    end: int


@dataclass(frozen=True)
class GoldSymbol:
    """A definition a patch changes.

    Attributes:
        id: ``path:Qualified.name`` (methods ``path:Class.method``).
        path: the file (new path for a rename).
        qualified: the dotted name; ``kind`` the tree-sitter node type.
        change: ``added`` (absent at base), ``deleted`` (absent after) or ``modified``.
        base_lines: the whole definition at base (None when added).
        patched_lines: the whole definition after the patch (None when deleted).
    """

    id: str
    path: str
    qualified: str
    kind: str
    change: SymbolChange
    base_lines: LineRange | None
    patched_lines: LineRange | None


@dataclass
class FileGold:
    """The gold of one file of a patch.

    Attributes:
        path: the file's path after the patch (its old path when deleted).
        old_path: the path before the patch (differs from ``path`` for a rename).
        status: ``added``, ``deleted``, ``modified`` or ``renamed``.
        binary: a binary patch (no lines).
        removed: removed lines, old numbering; ``added`` added lines, new numbering.
        inserted: base lines (old numbering) each block of added lines follows; line 1 for a
            block at the top of the file; empty for an added file.
        enclosing: whole base lines of the definitions enclosing added lines (empty without a
            base tree, for non-code files, or when the insertion is at module level).
        symbols: definitions changed (empty without a base tree or for non-code files).
        file_level: the file is a location in its own right — a non-code or unsupported file,
            a binary patch, a pure rename, or a changed line outside every definition.
    """

    path: str
    old_path: str
    status: FileStatus
    binary: bool = False
    removed: list[LineRange] = field(default_factory=list)
    added: list[LineRange] = field(default_factory=list)
    inserted: list[LineRange] = field(default_factory=list)
    enclosing: list[LineRange] = field(default_factory=list)
    symbols: list[GoldSymbol] = field(default_factory=list)
    file_level: bool = True


def merge_lines(lines: Iterable[int]) -> list[LineRange]:
    """Sorted 1-based line numbers → inclusive ranges, merging adjacent and equal lines."""
    ranges: list[LineRange] = []
    for line in sorted(set(lines)):
        if ranges and line == ranges[-1].end + 1:
            ranges[-1] = LineRange(ranges[-1].start, line)
        else:
            ranges.append(LineRange(line, line))
    return ranges


def _strip_prefix(name: str) -> str:
    return name[2:] if name.startswith(("a/", "b/")) else name


def parse_patch(patch: str) -> PatchSet:
    """``patch`` parsed by unidiff, CRLF line ends read as LF.

    Raises:
        InvalidInput: the text is not a unified diff (the message names the offending line).
    """
    text = patch.replace("\r\n", "\n")
    check_hunk_lengths(text)
    try:
        return PatchSet(text)
    except UnidiffParseError as exc:
        raise InvalidInput(
            f"patch is not a valid unified diff: {exc}", {"error": str(exc)}
        ) from exc


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def _is_file_header(lines: list[str], i: int) -> bool:
    return lines[i].startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ ")


def check_hunk_lengths(patch: str) -> None:
    """Every hunk has exactly the lines its header counts (``@@ -a,b +c,d @@``: ``b`` context
    and removed lines, ``d`` context and added lines; ``\\ No newline`` lines do not count).

    Raises:
        InvalidInput: a hunk is longer or shorter than its header; the message quotes the
            header and names the patch line (1-based).
    """
    lines = patch.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the text after the final newline is no line
    i = 0
    while i < len(lines):
        match = _HUNK.match(lines[i])
        if match is None:
            i += 1
            continue
        header, number = lines[i].rstrip(), i + 1
        old = 1 if match.group(2) is None else int(match.group(2))
        new = 1 if match.group(4) is None else int(match.group(4))
        i += 1
        while (old > 0 or new > 0) and i < len(lines):
            line = lines[i]
            if line.startswith("\\"):
                i += 1
                continue
            kind = line[:1]
            if kind not in (" ", "-", "+", "") or _HUNK.match(line) or _is_file_header(lines, i):
                break
            old -= kind in (" ", "-", "")
            new -= kind in (" ", "+", "")
            i += 1
        if old > 0 or new > 0:
            raise InvalidInput(
                f"patch is not a valid unified diff: patch line {number}: hunk {header!r} is "
                "shorter than its header "
                f"({old} old and {new} new line(s) missing)",
                {"hunk": header, "line": number},
            )
        while i < len(lines) and lines[i].startswith("\\"):
            i += 1
        if i < len(lines) and lines[i][:1] in (" ", "-", "+") and not _is_file_header(lines, i):
            raise InvalidInput(
                f"patch is not a valid unified diff: patch line {i + 1}: hunk {header!r} "
                f"(line {number}) is longer than its "
                f"header: {lines[i][:80]!r} is past its last line",
                {"hunk": header, "line": i + 1},
            )


def _insertion_points(pf: PatchedFile) -> list[int]:
    """The base line each block of added lines follows (1 for a block at the top)."""
    points: list[int] = []
    for hunk in pf:
        last = hunk.source_start - 1 if hunk.source_length else hunk.source_start
        previous_added = False
        for ln in hunk:
            if ln.is_added:
                if not previous_added:
                    points.append(max(last, 1))
                previous_added = True
                continue
            previous_added = False
            if ln.source_line_no:
                last = ln.source_line_no
    return points


def _file_gold(pf: PatchedFile) -> FileGold:
    old = _strip_prefix(pf.source_file)
    new = _strip_prefix(pf.target_file)
    if pf.is_added_file:
        status: FileStatus = "added"
        old = new
    elif pf.is_removed_file:
        status, new = "deleted", old
    elif pf.is_rename or old != new:
        status = "renamed"
    else:
        status = "modified"
    removed = [ln.source_line_no for h in pf for ln in h if ln.is_removed and ln.source_line_no]
    added = [ln.target_line_no for h in pf for ln in h if ln.is_added and ln.target_line_no]
    return FileGold(
        path=new,
        old_path=old,
        status=status,
        binary=bool(pf.is_binary_file),
        removed=merge_lines(removed),
        added=merge_lines(added),
        inserted=[] if status == "added" else merge_lines(_insertion_points(pf)),
    )


def patch_lines(patch: str) -> list[FileGold]:
    """Files and changed line ranges of ``patch`` (no repository needed), in patch order.

    Every file is ``file_level`` here; :func:`gold_locations` refines that with definitions.

    Raises:
        InvalidInput: not a unified diff.
    """
    return [_file_gold(pf) for pf in parse_patch(patch)]


def patched_content(base: bytes, pf: PatchedFile) -> bytes:
    """``base`` (the old file) with the hunks of ``pf`` applied, in memory.

    Raises:
        InvalidInput: a hunk's context or removed lines do not match ``base``.
    """
    old = base.replace(b"\r\n", b"\n").splitlines(keepends=True)
    out: list[bytes] = []
    cursor = 0  # index into old (0-based) of the next line not yet copied
    for hunk in pf:
        start = hunk.source_start - 1 if hunk.source_length else hunk.source_start
        if start < cursor or start > len(old):
            raise InvalidInput(
                f"{pf.path}: hunk @@ -{hunk.source_start},{hunk.source_length} does not fit the "
                f"base file ({len(old)} lines)",
                {"path": pf.path, "hunk": str(hunk.source_start)},
            )
        out.extend(old[cursor:start])
        cursor = start
        for ln in hunk:
            if ln.is_added or ln.is_context:
                out.append(ln.value.encode("utf-8"))
            if ln.is_removed or ln.is_context:
                cursor += 1
    out.extend(old[cursor:])
    return b"".join(out)


def _touched(defs: list[Definition], ranges: list[LineRange]) -> tuple[set[str], bool]:
    """Qualified names of the innermost definitions containing the lines, and whether some
    line lies outside every (named) definition."""
    names: set[str] = set()
    outside = False
    for r in ranges:
        for line in range(r.start, r.end + 1):
            d = innermost(defs, line)
            if d is None or not d.qualified:
                outside = True
            else:
                names.add(d.qualified)
    return names, outside


def _span(defs: list[Definition], qualified: str) -> LineRange | None:
    d = next((d for d in defs if d.qualified == qualified), None)
    return LineRange(d.start_line, d.end_line) if d else None


def _with_symbols(fg: FileGold, pf: PatchedFile, base: BaseTree) -> FileGold:
    if fg.binary or language_of(fg.path) is None or not (fg.removed or fg.added):
        return fg
    before = b"" if fg.status == "added" else base(fg.old_path)
    if before is None:
        raise InvalidInput(
            f"{fg.old_path}: not in the base tree, but the patch changes it",
            {"path": fg.old_path},
        )
    after = b"" if fg.status == "deleted" else patched_content(before, pf)
    defs_before = definitions(fg.old_path, before) if before else []
    defs_after = definitions(fg.path, after) if after else []
    names_removed, out_removed = _touched(defs_before, fg.removed)
    names_added, out_added = _touched(defs_after, fg.added)
    at_base = {d.qualified for d in defs_before}
    after_names = {d.qualified for d in defs_after}
    symbols = []
    for q in sorted(names_removed | names_added):
        change: SymbolChange = (
            "added" if q not in at_base else "deleted" if q not in after_names else "modified"
        )
        kind = next(d.kind for d in [*defs_after, *defs_before] if d.qualified == q)
        symbols.append(
            GoldSymbol(
                id=f"{fg.path}:{q}",
                path=fg.path,
                qualified=q,
                kind=kind,
                change=change,
                base_lines=_span(defs_before, q),
                patched_lines=_span(defs_after, q),
            )
        )
    fg.symbols = symbols
    fg.enclosing = _enclosing(defs_before, defs_after, fg.added) if before else []
    fg.file_level = out_removed or out_added or fg.status == "renamed"
    return fg


def _enclosing(
    defs_before: list[Definition], defs_after: list[Definition], added: list[LineRange]
) -> list[LineRange]:
    """Base lines of the definitions enclosing the added lines: the innermost patched
    definition of each added line, or its nearest parent that exists at base."""
    at_base = {d.qualified: d for d in defs_before if d.qualified}
    spans: set[int] = set()
    for r in added:
        for line in range(r.start, r.end + 1):
            d = innermost(defs_after, line)
            name = d.qualified if d is not None else ""
            while name and name not in at_base:
                name = name.rsplit(".", 1)[0] if "." in name else ""
            if name:
                base = at_base[name]
                spans.update(range(base.start_line, base.end_line + 1))
    return merge_lines(spans)


def gold_locations(patch: str, base: BaseTree | Path) -> list[FileGold]:
    """Gold locations of ``patch`` against the base tree ``base`` (LOCALIZATION §3).

    Args:
        patch: a unified diff (git or plain; CRLF, ``-U0`` and binary patches accepted).
        base: the base tree — a callable ``path → bytes | None`` or a directory checked out
            at the base commit.

    Returns:
        One :class:`FileGold` per file of the patch, in patch order, with its changed
        definitions (``symbols``) for code files and ``file_level`` when the file itself is a
        location.

    Raises:
        InvalidInput: not a unified diff; a changed file missing from the base tree; a hunk
            that does not fit its base file; the ``localization`` extra missing.
    """
    tree = tree_from_dir(base) if isinstance(base, Path) else base
    return [_with_symbols(_file_gold(pf), pf, tree) for pf in parse_patch(patch)]


def gold_files(locations: Iterable[FileGold]) -> list[str]:
    """The distinct paths of ``locations`` (new paths; old paths of renames too), sorted."""
    paths: set[str] = set()
    for fg in locations:
        paths.update({fg.path, fg.old_path})
    return sorted(paths)


def tree_from_dir(root: Path) -> BaseTree:
    """A base tree reading files under ``root`` (a checkout at the base commit)."""

    def read(path: str) -> bytes | None:
        target = root / path
        return target.read_bytes() if target.is_file() else None

    return read


def tree_from_git(repo: Path, commit: str) -> BaseTree:
    """A base tree reading blobs of ``commit`` from the local git repository ``repo``
    (``git show commit:path``; no checkout, no network)."""

    def read(path: str) -> bytes | None:
        done = subprocess.run(
            ["git", "-C", str(repo), "show", f"{commit}:{path}"],
            capture_output=True,
            check=False,
        )
        return done.stdout if done.returncode == 0 else None

    return read
