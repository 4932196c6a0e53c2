"""The SWE-bench loader (SPEC I; LOCALIZATION §2; Jimenez et al., ICLR 2024).

A SWE-bench row (Lite, Verified, or a local JSON/JSONL/Parquet copy of either) becomes a case:

- the task is ``problem_statement`` and nothing else;
- gold (declared in ``gold_fields``, never sent to a harness): ``patch``, ``test_patch``,
  ``FAIL_TO_PASS``, ``PASS_TO_PASS``, ``hints_text``, **and every column this module does not
  know** (third-party copies add ``patch_files``, ``test_patch_files``, ``patch_diff_details``:
  the fix's own file list, which would tell a harness where to look). Unknown columns are kept,
  not dropped, and named in the load report;
- ``FAIL_TO_PASS``/``PASS_TO_PASS`` are lists of test names: the JSON text of Lite and Verified
  is decoded, a real list (SWE-bench Multilingual) is kept; anything else is a row error naming
  the instance and the field;
- metadata (visible to a harness): ``repo``, ``base_commit``, ``version``, ``created_at``,
  ``environment_setup_commit``, ``difficulty`` (Verified) and ``swebench_image``, the official
  evaluation image (``swebench/sweb.eval.x86_64.<id, __ → _1776_>:latest``) for an image
  provider that works in its ``/testbed``;
- the environment is a checkout of ``https://github.com/<repo>.git`` at ``base_commit`` through
  the mirror cache, so a case runs without Docker (and without network once the mirror is
  seeded: ``benchbook mirrors add``).

Loading never clones and never calls a model. The catalog entries live in
``datasets.catalog.swebench``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from benchbook.contracts import SourceRef
from benchbook.datasets.mapping_rules import RowError
from benchbook.datasets.sources.files import FileSource

ID_FIELD = "instance_id"
TASK_FIELD = "problem_statement"
GOLD_FIELDS = ("patch", "test_patch", "FAIL_TO_PASS", "PASS_TO_PASS", "hints_text")
METADATA_FIELDS = (
    "repo",
    "base_commit",
    "version",
    "created_at",
    "environment_setup_commit",
    "difficulty",
)
TEST_LIST_FIELDS = ("FAIL_TO_PASS", "PASS_TO_PASS")
IMAGE_KEY = "swebench_image"
KNOWN_FIELDS = frozenset({ID_FIELD, TASK_FIELD, *GOLD_FIELDS, *METADATA_FIELDS})


def swebench_image(instance_id: str) -> str:
    """The official evaluation image of an instance: ``__`` becomes ``_1776_``, lowercased
    (``django__django-11099`` → ``swebench/sweb.eval.x86_64.django_1776_django-11099:latest``)."""
    name = instance_id.replace("__", "_1776_").lower()
    return f"swebench/sweb.eval.x86_64.{name}:latest"


def decode_test_list(value: Any, where: str) -> list[str]:
    """``FAIL_TO_PASS``/``PASS_TO_PASS`` as a list of test names.

    Args:
        value: JSON text of a list of strings (Lite, Verified) or the list itself.
        where: names the row and field in errors (``instance 'x' field 'FAIL_TO_PASS'``).

    Raises:
        RowError: not JSON, or not a list of strings.
    """
    decoded = value
    if isinstance(value, str):
        try:
            decoded = orjson.loads(value)
        except orjson.JSONDecodeError as exc:
            raise RowError(f"{where}: not JSON text of a list of test names ({exc})") from exc
    if not isinstance(decoded, list) or not all(isinstance(t, str) for t in decoded):
        raise RowError(f"{where}: expected a list of test names, got {_shape(decoded)}")
    return decoded


def _shape(value: Any) -> str:
    if isinstance(value, list):
        kinds = sorted({type(v).__name__ for v in value if not isinstance(v, str)})
        return f"a list holding {', '.join(kinds)}"
    return type(value).__name__


def extra_fields(row: dict[str, Any]) -> list[str]:
    """The row's columns this module does not know, in row order (kept as gold)."""
    return [k for k in row if k not in KNOWN_FIELDS]


def apply_row(case: dict[str, Any], row: dict[str, Any]) -> None:
    """The catalog hook: finish the case the mapping built from ``row`` (module rules).

    Edits ``case`` in place: decoded test lists, unknown columns added as gold, the image name
    in metadata. Idempotent.

    Raises:
        RowError: a test list is not a list of test names (instance and field named).
    """
    where = f"instance {row.get(ID_FIELD)!r} field"
    meta = case["metadata"]
    for field in TEST_LIST_FIELDS:
        if field in meta:
            meta[field] = decode_test_list(meta[field], f"{where} {field!r}")
    extras = extra_fields(row)
    for field in extras:
        meta[field] = row[field]
    case["gold_fields"] = [*dict.fromkeys([*case.get("gold_fields", []), *extras])]
    meta[IMAGE_KEY] = swebench_image(str(case["id"]))


class SweBenchSource:
    """A row source over a local SWE-bench table (``.json``, ``.jsonl``, ``.parquet``, gzip
    allowed): the generic file reader's rows as they are, and ``notes`` (the load report) once
    iteration has finished: rows, repositories, rows with hints, columns kept as gold."""

    def __init__(self, path: Path, name: str | None = None) -> None:
        self._file = FileSource(path, name=name)
        self.format = self._file.format
        self.ref: SourceRef = self._file.ref
        self.total = self._file.total
        self.read_fraction = self._file.read_fraction  # progress of a JSONL table
        self.notes: list[str] = []

    def rows(self) -> Iterator[tuple[int, dict[str, Any]]]:
        """``(row number, row)`` in file order; raises InvalidInput like ``FileSource``."""
        repos: Counter[str] = Counter()
        extras: dict[str, None] = {}
        hints = rows = 0
        for number, row in self._file.rows():
            rows += 1
            repos[str(row.get("repo"))] += 1
            hints += bool(row.get("hints_text"))
            extras.update(dict.fromkeys(extra_fields(row)))
            yield number, row
        top = ", ".join(f"{r} {n}" for r, n in repos.most_common(3))
        self.notes = [
            f"swe-bench: {rows} rows from {len(repos)} repositories ({top}, …)",
            f"rows with hints_text: {hints} (gold, never sent to a harness)",
            f"extra columns kept as gold: {', '.join(extras) or 'none'}",
        ]


def swebench_file(path: Path, name: str | None) -> SweBenchSource:
    """The catalog's ``file_source`` factory for SWE-bench entries."""
    return SweBenchSource(path, name)
