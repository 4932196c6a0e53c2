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


def _noting_first(cases: Iterable[Case], first: list[Case]) -> Iterator[Case]:
    """``cases`` as they are, the first one appended to ``first`` (its graders pick the
    lm-eval scoring)."""
    for case in cases:
        if not first:
            first.append(case)
        yield case


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


#: lm-eval's own ``gsm8k`` task (``lm_eval/tasks/gsm8k/gsm8k.yaml``, task version 3.0): its
#: stop sequences, its ``exact_match`` options and its two filters, verbatim.
GSM8K_UNTIL = ["Question:", "</s>", "<|im_end|>"]
GSM8K_IGNORED = [",", "\\$", "(?s).*#### ", "\\.$"]
Filters = list[tuple[str, list[tuple[str, dict[str, Any]]]]]
GSM8K_FILTERS: Filters = [
    ("strict-match", [("regex", {"regex_pattern": "#### (\\-?[0-9\\.\\,]+)"}), ("take_first", {})]),
    (
        "flexible-extract",
        [
            ("regex", {"group_select": -1, "regex_pattern": "(-?[$0-9.,]{2,})|(-?[0-9]+)"}),
            ("take_first", {}),
        ],
    ),
]
#: Benchbook's exact and normalized answer match as lm-eval filters and metric options
#: (normalized is an approximation: lm-eval lowercases and drops ASCII punctuation, where
#: Benchbook also folds Unicode and collapses whitespace).
STRIP_FILTERS: Filters = [("strip", [("remove_whitespace", {}), ("take_first", {})])]


def scoring_kind(case: Case | None) -> str:
    """How a version is scored, from its first case's graders: ``numeric`` (GSM8K-style),
    ``normalized`` or ``exact`` (``answer-match`` modes; ``contains`` and any other grader
    fall back to ``exact``)."""
    for grader in case.graders if case is not None else []:
        if grader.id == "numeric":
            return "numeric"
        if grader.id == "answer-match" and grader.config.get("mode") == "normalized":
            return "normalized"
    return "exact"


def _q(value: Any) -> str:
    """A YAML scalar in double quotes (JSON's escaping is valid YAML)."""
    return orjson.dumps(value).decode()


def _filters_yaml(filters: Filters) -> str:
    lines = ["filter_list:"]
    for name, steps in filters:
        lines += [f"  - name: {_q(name)}", "    filter:"]
        for function, kwargs in steps:
            lines.append(f"      - function: {_q(function)}")
            lines += [f"        {k}: {_q(v)}" for k, v in kwargs.items()]
    return "\n".join(lines) + "\n"


def _scoring_yaml(kind: str) -> str:
    """``generation_kwargs``, ``metric_list`` and ``filter_list`` of a scoring kind."""
    until = GSM8K_UNTIL if kind == "numeric" else ["\n\n"]
    gen = f"generation_kwargs:\n  until: {_q(until)}\n  do_sample: false\n  temperature: 0.0\n"
    metric = "metric_list:\n  - metric: exact_match\n    aggregation: mean\n"
    metric += "    higher_is_better: true\n"
    if kind == "numeric":
        metric += "    ignore_case: true\n    ignore_punctuation: false\n"
        metric += f"    regexes_to_ignore: {_q(GSM8K_IGNORED)}\n"
        return gen + metric + _filters_yaml(GSM8K_FILTERS)
    if kind == "normalized":
        metric += "    ignore_case: true\n    ignore_punctuation: true\n"
    return gen + metric + _filters_yaml(STRIP_FILTERS)


def lm_eval_task(version: VersionInfo, data_file: Path, fmt: str, kind: str = "exact") -> str:
    """The lm-eval task YAML for an export (keys of lm-eval's ``TaskConfig``; ``data_files``
    is absolute so the file works from any directory).

    ``kind`` (:func:`scoring_kind`) picks the answer extraction lm-eval applies before
    ``exact_match``: ``numeric`` writes lm-eval's own ``gsm8k`` stop sequences, metric options
    and its ``strict-match`` and ``flexible-extract`` filters (:data:`GSM8K_FILTERS`), so a
    model that reasons before answering scores as in lm-eval's ``gsm8k`` task; ``exact`` and
    ``normalized`` strip the answer (``remove_whitespace``) and, for ``normalized``, ignore
    case and punctuation. ``metadata.benchbook_dataset`` names the version (an import checks it).
    """
    builder = "parquet" if fmt == "parquet" else "json"
    return (
        f"# lm-eval task for Benchbook dataset {version.id}@{version.version}"
        f" (scoring: {kind})\n"
        f"task: {task_name(version)}\n"
        f"dataset_path: {builder}\n"
        "dataset_kwargs:\n"
        "  data_files:\n"
        f"    test: {orjson.dumps(str(data_file.resolve())).decode()}\n"
        "test_split: test\n"
        "output_type: generate_until\n"
        'doc_to_text: "{{input}}"\n'
        'doc_to_target: "{{target}}"\n' + _scoring_yaml(kind) + "metadata:\n"
        "  version: 1.0\n"
        f"  benchbook_dataset: {_q(f'{version.id}@{version.version}')}\n"
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
        first: list[Case] = []
        n = writer(_batches(_noting_first(cases, first)), part / "data" / data_name)
        (part / "README.md").write_text(dataset_card(version, data_name, n))
        kind = scoring_kind(first[0] if first else None)
        (part / "lm_eval_task.yaml").write_text(
            lm_eval_task(version, out / "data" / data_name, fmt, kind)
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
