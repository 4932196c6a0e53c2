"""The bridge to the upstream ContextBench scorer (SPEC I; LOCALIZATION §5).

Format source: the scorer ``EuniAI/ContextBench`` (``python -m contextbench.evaluate --gold GOLD
--pred PRED --cache DIR --out OUT.jsonl``, env ``CONTEXTBENCH_TMP_ROOT``):

- gold JSONL, one object a line: ``{inst_id, original_inst_id, commit, repo_url, gold_ctx:
  [{file, start_line, end_line, content}], patch, test_patch, split}``;
- prediction JSONL: ``{instance_id, repo_url, commit, model_patch, traj_data: {pred_steps:
  [{files, spans: {file: [{start, end}]}, symbols: {file: [names]}}], pred_files, pred_spans,
  pred_symbols}}`` — the file name must not end in ``output.jsonl``;
- ``--out``: one row per instance, ``{instance_id, num_steps, final: {level: {coverage,
  precision, intersection, gold_size, pred_size}}, trajectory: {steps, auc_coverage,
  redundancy}, editloc: {…}}`` or ``{instance_id, error}``. Aggregates go to stderr only.

``repo_url`` is a local mirror path, so the scorer clones without network. The scorer runs like a
workspace command (:func:`benchbook.eval.graders.command.run_in_workspace`): its own process
group, a clean environment (``PATH``, ``HOME`` = its work directory, ``LANG``, plus
``CONTEXTBENCH_TMP_ROOT``; prefix the command with ``env NAME=value`` for more); a failure
(exit status, timeout, a missing or malformed ``--out``) becomes
:class:`ScorerOutcome.error`, never an exception.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from benchbook.contracts.dataset import Case, GitSource
from benchbook.eval.graders.command import run_in_workspace
from benchbook.eval.localization import LEVELS, Prediction
from benchbook.eval.sync import run_sync

TAIL_CHARS = 4000
TOLERANCE = 1e-9
"""Two numbers agree when they differ by at most this much (floats from two programs)."""
_FINAL_FIELDS = ("coverage", "precision", "intersection", "gold_size", "pred_size")


def gold_row(case: Case, gold: list[dict[str, Any]], repo_url: str) -> dict[str, Any]:
    """The upstream gold row of one case (module docstring; ``split`` = the row's source
    benchmark, ``Verified``/``Multi``/``Poly``/``Pro``, else ``test``)."""
    meta = case.metadata
    source = getattr(case.env, "source", None)
    return {
        "inst_id": case.id,
        "original_inst_id": str(meta.get("original_inst_id") or case.id),
        "commit": source.ref if isinstance(source, GitSource) else meta.get("base_commit"),
        "repo_url": repo_url,
        "gold_ctx": [
            {
                "file": s["file"],
                "start_line": s["start_line"],
                "end_line": s["end_line"],
                "content": s.get("content", ""),
            }
            for s in gold
        ],
        "patch": meta.get("patch") or "",
        "test_patch": meta.get("test_patch") or "",
        "split": str(meta.get("source") or "test"),
    }


def prediction_row(case: Case, prediction: Prediction, repo_url: str) -> dict[str, Any]:
    """The upstream prediction row of one case: its final context and retrieval steps, the
    run's repository diff as ``model_patch`` (module docstring)."""
    source = getattr(case.env, "source", None)
    return {
        "instance_id": case.id,
        "repo_url": repo_url,
        "commit": source.ref if isinstance(source, GitSource) else case.metadata.get("base_commit"),
        "model_patch": prediction.model_patch,
        "traj_data": {
            "pred_steps": [
                {
                    "files": list(s.get("files") or []),
                    "spans": dict(s.get("spans") or {}),
                    "symbols": dict(s.get("symbols") or {}),
                }
                for s in prediction.steps
            ],
            "pred_files": list(prediction.files),
            "pred_spans": prediction.spans,
            "pred_symbols": prediction.symbols,
        },
    }


def write_jsonl(rows: Iterable[Mapping[str, Any]], path: Path) -> int:
    """Write ``rows`` one JSON object a line (UTF-8, ``\\n``-terminated); the row count."""
    n = 0
    with path.open("wb") as out:
        for row in rows:
            out.write(orjson.dumps(row) + b"\n")
            n += 1
    return n


@dataclass
class ScorerOutcome:
    """What one scorer invocation left.

    Attributes:
        rows: ``instance_id → --out row`` (error rows included).
        error: why the invocation failed as a whole (None when ``--out`` was read).
        problems: per-line problems in ``--out`` (``"line 3: …"``); those lines are skipped.
        returncode: the exit status (None when it never started or timed out).
        stderr_tail: the last :data:`TAIL_CHARS` of stderr (the scorer's aggregates).
        duration_ms: wall time of the subprocess.
    """

    rows: dict[str, dict[str, Any]] = field(default_factory=dict)
    error: str | None = None
    problems: list[str] = field(default_factory=list)
    returncode: int | None = None
    stderr_tail: str = ""
    duration_ms: int = 0


def scorer_argv(command: str, gold: Path, pred: Path, cache: Path, out: Path) -> list[str]:
    """``shlex.split(command)`` plus the contract's four options.

    Raises:
        ValueError: the command is empty or not shell-quotable.
    """
    argv = shlex.split(command)
    if not argv:
        raise ValueError("the scorer command is empty")
    return [
        *argv,
        "--gold",
        str(gold),
        "--pred",
        str(pred),
        "--cache",
        str(cache),
        "--out",
        str(out),
    ]


def run_scorer(
    argv: list[str], work: Path, cache: Path, out: Path, timeout_s: float
) -> ScorerOutcome:
    """Run the scorer in ``work`` (its ``HOME``; ``CONTEXTBENCH_TMP_ROOT`` = ``work/tmp``) and
    read ``out``. Never raises for the scorer's failures (module docstring)."""
    tmp_root = work / "tmp"
    tmp_root.mkdir(parents=True, exist_ok=True)
    cache.mkdir(parents=True, exist_ok=True)
    outcome = ScorerOutcome()
    try:
        done = run_sync(
            run_in_workspace(argv, work, timeout_s, {"CONTEXTBENCH_TMP_ROOT": str(tmp_root)})
        )
    except OSError as exc:
        outcome.error = f"the scorer could not start: {exc}"
        return outcome
    outcome.duration_ms = done.duration_ms
    outcome.stderr_tail = done.stderr[-TAIL_CHARS:]
    outcome.returncode = done.exit_code
    if done.timed_out:
        outcome.error = f"the scorer did not finish within {timeout_s:g} s (killed)"
    elif done.exit_code != 0:
        outcome.error = f"the scorer exited with status {done.exit_code}"
    elif not out.is_file():
        outcome.error = f"the scorer exited 0 but wrote no --out file ({out.name})"
    else:
        outcome.rows, outcome.problems = read_out(out.read_bytes())
    return outcome


def read_out(data: bytes) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """``(instance_id → row, problems)`` of an ``--out`` file; a malformed line is a problem
    naming its line number and is skipped."""
    rows: dict[str, dict[str, Any]] = {}
    problems: list[str] = []
    for number, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            problems.append(f"line {number}: not JSON ({exc})")
            continue
        if not isinstance(row, dict) or not isinstance(row.get("instance_id"), str):
            problems.append(f"line {number}: not an object with a string instance_id")
            continue
        if "error" not in row and not isinstance(row.get("final"), dict):
            problems.append(f"line {number}: {row['instance_id']}: neither final nor error")
            continue
        rows[row["instance_id"]] = row
    return rows, problems


def compared_metrics(row: Mapping[str, Any]) -> dict[str, float | None]:
    """The numbers both sides report, by dotted name: ``num_steps``,
    ``final.<level>.<coverage|precision|intersection|gold_size|pred_size>``,
    ``trajectory.<auc_coverage|redundancy>.<level>``, ``editloc.<recall|precision>``
    (None where the row lacks it)."""
    out: dict[str, float | None] = {"num_steps": _number(row.get("num_steps"))}
    final = row.get("final") or {}
    traj = row.get("trajectory") or {}
    for level in LEVELS:
        for name in _FINAL_FIELDS:
            out[f"final.{level}.{name}"] = _number((final.get(level) or {}).get(name))
        for name in ("auc_coverage", "redundancy"):
            out[f"trajectory.{name}.{level}"] = _number((traj.get(name) or {}).get(level))
    editloc = row.get("editloc") or {}
    for name in ("recall", "precision"):
        out[f"editloc.{name}"] = _number(editloc.get(name))
    return out


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def differences(ours: Mapping[str, Any], upstream: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every compared metric (:func:`compared_metrics`) where the two rows disagree by more
    than :data:`TOLERANCE`, or one side has it and the other does not:
    ``[{metric, ours, upstream}]``. EditLoc is compared only when ours applies (an empty
    patch makes upstream fall back to the gold patch, LOCALIZATION §4)."""
    a, b = compared_metrics(ours), compared_metrics(upstream)
    out = []
    for name, mine in a.items():
        if name.startswith("editloc.") and not ours.get("editloc"):
            continue
        theirs = b[name]
        if mine is None and theirs is None:
            continue
        if mine is None or theirs is None or not math.isclose(mine, theirs, abs_tol=TOLERANCE):
            out.append({"metric": name, "ours": mine, "upstream": theirs})
    return out
