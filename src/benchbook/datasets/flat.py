"""Flat rows and export directories that other harnesses read as they are (issue 16).

A flat row is what Inspect AI, Hugging Face ``datasets`` and lm-eval need of a case:

- ``id``: the case id; ``input``: the task text (what a harness sees);
- ``target``: the gold ``expected`` as text (a string as it is, any other JSON value as its
  canonical JSON, ``null`` as ``""``);
- ``tags``: the case tags; ``metadata``: the non-gold metadata as canonical JSON text (one
  column type for every dataset; keys named in ``gold_fields`` are left out, as for a harness).

An export directory (``--format hf`` or ``parquet``) holds ``data/test.jsonl`` (or
``data/test.parquet``), a ``README.md`` dataset card whose YAML header names that file as the
``test`` split (so ``datasets.load_dataset(DIR)`` reads it), and ``lm_eval_task.yaml``, an
lm-eval task (``dataset_path: json``/``parquet`` with ``dataset_kwargs.data_files``) whose
``doc_to_text`` is ``input`` and ``doc_to_target`` is ``target``. Files are written in a sibling
``.NAME.PID.part`` directory renamed into place, so a failure leaves nothing behind.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

import orjson

from benchbook.contracts.dataset import Case
from benchbook.contracts.registry import VersionInfo
from benchbook.errors import InvalidInput

ExportFormat = Literal["jsonl", "parquet", "hf"]
FORMATS: tuple[str, ...] = ("jsonl", "parquet", "hf")
BATCH = 1000
COLUMNS = ("id", "input", "target", "tags", "metadata")


def target_text(expected: Any) -> str:
    """``expected`` as text: a string as it is, ``None`` as ``""``, else canonical JSON."""
    if isinstance(expected, str):
        return expected
    if expected is None:
        return ""
    return orjson.dumps(expected, option=orjson.OPT_SORT_KEYS).decode()


def visible_metadata(case: Case) -> dict[str, Any]:
    """The case's metadata without its gold keys (``gold_fields``)."""
    gold = set(case.gold_fields)
    return {k: v for k, v in case.metadata.items() if k not in gold}


def flat_row(case: Case) -> dict[str, Any]:
    """The flat row of one case (see the module docstring)."""
    return {
        "id": case.id,
        "input": case.task,
        "target": target_text(case.expected),
        "tags": list(case.tags),
        "metadata": orjson.dumps(visible_metadata(case), option=orjson.OPT_SORT_KEYS).decode(),
    }


def write_atomically(output: Path, chunks: Iterable[bytes]) -> int:
    """Write ``chunks`` to ``output`` through a sibling ``.NAME.PID.part`` file renamed into
    place; returns the number of newline-terminated lines written.

    A failure leaves no partial file and any previous ``output`` untouched. Raises InvalidInput
    (``cannot write PATH: reason``) when ``output`` is a directory or its folder is missing or
    not writable.
    """
    if output.is_dir():
        raise InvalidInput(f"cannot write {output}: is a directory")
    part = output.with_name(f".{output.name}.{os.getpid()}.part")
    try:
        fh = part.open("xb")
    except OSError as exc:
        raise InvalidInput(f"cannot write {output}: {exc.strerror}") from exc
    lines = 0
    try:
        with fh:
            for chunk in chunks:
                fh.write(chunk)
                lines += chunk.count(b"\n")
        part.replace(output)
    except BaseException as exc:
        part.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise InvalidInput(f"cannot write {output}: {exc.strerror}") from exc
        raise
    return lines


def _batches(cases: Iterable[Case]) -> Iterator[list[dict[str, Any]]]:
    batch: list[dict[str, Any]] = []
    for case in cases:
        batch.append(flat_row(case))
        if len(batch) >= BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def _write_parquet(rows: Iterable[list[dict[str, Any]]], path: Path) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema(
        [
            ("id", pa.string()),
            ("input", pa.string()),
            ("target", pa.string()),
            ("tags", pa.list_(pa.string())),
            ("metadata", pa.string()),
        ]
    )
    n = 0
    with pq.ParquetWriter(path, schema) as writer:
        for batch in rows:
            writer.write_batch(pa.RecordBatch.from_pylist(batch, schema=schema))
            n += len(batch)
    return n


def _write_jsonl(rows: Iterable[list[dict[str, Any]]], path: Path) -> int:
    n = 0
    with path.open("wb") as fh:
        for batch in rows:
            fh.write(b"".join(orjson.dumps(r) + b"\n" for r in batch))
            n += len(batch)
    return n


def task_name(version: VersionInfo) -> str:
    """An lm-eval task name for a version: ``benchbook_<id>_<version>`` in ``[a-z0-9_]``."""
    return re.sub(r"[^a-z0-9_]+", "_", f"benchbook_{version.id}_{version.version}".lower())


def lm_eval_task(version: VersionInfo, data_file: Path, fmt: str) -> str:
    """The lm-eval task YAML for an export (keys of lm-eval's ``TaskConfig``; ``data_files``
    is absolute so the file works from any directory)."""
    builder = "parquet" if fmt == "parquet" else "json"
    return (
        f"# lm-eval task for Benchbook dataset {version.id}@{version.version}\n"
        f"task: {task_name(version)}\n"
        f"dataset_path: {builder}\n"
        "dataset_kwargs:\n"
        "  data_files:\n"
        f"    test: {orjson.dumps(str(data_file.resolve())).decode()}\n"
        "test_split: test\n"
        "output_type: generate_until\n"
        'doc_to_text: "{{input}}"\n'
        'doc_to_target: "{{target}}"\n'
        "generation_kwargs:\n"
        '  until: ["\\n\\n"]\n'
        "  do_sample: false\n"
        "metric_list:\n"
        "  - metric: exact_match\n"
        "    aggregation: mean\n"
        "    higher_is_better: true\n"
        "metadata:\n"
        "  version: 1.0\n"
        f"  benchbook_content_hash: {version.content_hash}\n"
    )


def dataset_card(version: VersionInfo, data_name: str, cases: int) -> str:
    """``README.md``: a YAML header naming ``data_name`` as the ``test`` split."""
    return (
        "---\n"
        "configs:\n"
        "  - config_name: default\n"
        "    data_files:\n"
        "      - split: test\n"
        f"        path: data/{data_name}\n"
        "---\n\n"
        f"# {version.id}@{version.version}\n\n"
        f"Exported from Benchbook: {cases} cases, content hash `{version.content_hash}`.\n"
        "Columns: `id`, `input` (the task), `target` (the expected answer as text), `tags`,\n"
        "`metadata` (non-gold metadata as JSON text).\n"
    )


def write_export(cases: Iterable[Case], out: Path, fmt: str, version: VersionInfo) -> int:
    """Write the export directory ``out`` (format ``hf`` or ``parquet``) for ``cases``, a
    batch of 1000 rows in memory at a time; returns the number of cases.

    Raises:
        InvalidInput: an unknown format, ``out`` exists and is not an empty directory, or its
            folder cannot be written. Nothing is left behind on failure.
    """
    if fmt not in ("hf", "parquet"):
        raise InvalidInput(f"format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise InvalidInput(f"cannot write {out}: exists and is not an empty directory")
    part = out.with_name(f".{out.name}.{os.getpid()}.part")
    try:
        (part / "data").mkdir(parents=True)
    except OSError as exc:
        raise InvalidInput(f"cannot write {out}: {exc.strerror}") from exc
    data_name = "test.parquet" if fmt == "parquet" else "test.jsonl"
    try:
        writer = _write_parquet if fmt == "parquet" else _write_jsonl
        n = writer(_batches(cases), part / "data" / data_name)
        (part / "README.md").write_text(dataset_card(version, data_name, n))
        (part / "lm_eval_task.yaml").write_text(
            lm_eval_task(version, out / "data" / data_name, fmt)
        )
        if out.exists():
            out.rmdir()
        part.replace(out)
    except BaseException as exc:
        shutil.rmtree(part, ignore_errors=True)
        if isinstance(exc, OSError):
            raise InvalidInput(f"cannot write {out}: {exc.strerror}") from exc
        raise
    return n
