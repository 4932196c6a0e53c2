"""lm-evaluation-harness ``--log_samples`` output read as a :class:`ForeignLog` (issue 31).

Format (lm-eval 0.4, ``lm_eval/loggers/evaluation_tracker.py``): the output folder holds, per
model, ``results_<date>.json`` (``results.<task>`` the aggregated metrics, ``configs.<task>``
the task config, ``config.model``/``model_args``, ``lm_eval_version``, ``model_name``) and one
``samples_<task>_<date>.jsonl`` per task: a line per (document, filter) with ``doc_id``,
``doc``, ``target``, ``arguments``, ``resps``, ``filtered_resps``, ``filter``, ``metrics`` (the
metric names) and each metric's value under its name. Plain JSON: read line by line with
orjson, no lm-eval needed.

- **Which answer.** ``filtered_resps`` of one filter: ``filter`` when given (``strict-match``,
  ``flexible-extract``, ``none`` …), else the first filter in the file (lm-eval writes them in
  the task's ``filter_list`` order). The first element when it is a list (repeats are already
  reduced by the filter, e.g. ``take_first``); the sample index is always 0.
- **Which case.** ``doc.id`` (a Benchbook ``--format hf`` export keeps the case id there) is
  the case id; the input text for matching by content is the document's ``input``,
  ``question``, ``prompt`` or ``text`` (the first that is text), else the first request's
  prompt (``arguments.gen_args_0.arg_0``).
- **Which run.** One task per import: ``task`` names it when the folder holds several; of a
  task's several ``samples_*`` files (several runs in one folder) the newest by its date is read.
- **Dataset.** A task exported by Benchbook names its version in ``metadata.benchbook_dataset``
  of the task config (``configs.<task>``), which the import checks.

Bounds: at most 10,000 files looked at in the folder, the samples file ≤ ``max_file_bytes``,
each line and the results JSON ≤ ``max_entry_bytes``; a bad line is named by file and line.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import orjson
from pydantic import JsonValue

from benchbook.contracts.run import Trace
from benchbook.contracts.score import Score
from benchbook.errors import ContentConflict
from benchbook.eval.interop.foreign import (
    ForeignLog,
    ForeignSample,
    check_sample_count,
    file_sha256,
    tool_score,
)
from benchbook.eval.interop.inspect_logs import LogLimits

TOOL = "lm-eval"
MAX_FILES = 10_000
_SAMPLES = re.compile(r"^samples_(?P<task>.+?)(?:_(?P<date>\d{4}-\d{2}-\d{2}T[0-9.\-]+))?\.jsonl$")
INPUT_KEYS = ("input", "question", "prompt", "text")


def _refuse(message: str, path: str = "samples") -> ContentConflict:
    return ContentConflict(message, {"errors": [{"path": path, "message": message}]})


def _files(root: Path, pattern: str) -> list[Path]:
    if root.is_file():
        return [root] if root.match(pattern) else []
    found = []
    for i, path in enumerate(root.rglob(pattern)):
        if i >= MAX_FILES:
            raise _refuse(f"{root}: more than {MAX_FILES} {pattern} files; point at one run")
        if path.is_file():
            found.append(path)
    return found


def _pick_samples(root: Path, task: str | None) -> tuple[Path, str | None]:
    """The samples file to read and its task name (module docstring, "Which run")."""
    by_task: dict[str | None, list[tuple[str, Path]]] = {}
    for path in _files(root, "samples_*.jsonl"):
        m = _SAMPLES.match(path.name)
        name = m.group("task") if m and m.group("task") != "inline" else None
        by_task.setdefault(name, []).append(((m.group("date") or "") if m else "", path))
    if not by_task:
        raise _refuse(f"{root.name}: no samples_<task>_*.jsonl (run lm_eval with --log_samples)")
    if task is not None:
        if task not in by_task and list(by_task) != [None]:
            known = ", ".join(sorted(str(t) for t in by_task))
            raise _refuse(f"no samples of task {task!r} (found: {known})", "task")
        picked = by_task.get(task) or by_task[None]
    elif len(by_task) > 1:
        known = ", ".join(sorted(str(t) for t in by_task))
        raise _refuse(f"samples of several tasks ({known}); name one with task (--task)", "task")
    else:
        task, picked = next(iter(by_task.items()))
    return max(picked)[1], task


def _read_json(path: Path, limit: int) -> Any:
    size = path.stat().st_size
    if size > limit:
        raise _refuse(f"{path.name}: {size} bytes; at most {limit} (BENCHBOOK_MAX_DOCUMENT_BYTES)")
    try:
        return orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise _refuse(f"{path.name}: not JSON: {exc}", path.name) from exc


def _results(root: Path, task: str | None, limit: int) -> tuple[dict[str, Any], str | None]:
    """The newest ``results_*.json`` beside the samples that has the task, and its sha256."""
    candidates = sorted(_files(root if root.is_dir() else root.parent, "results_*.json"))
    for path in reversed(candidates):
        data = _read_json(path, limit)
        if not isinstance(data, dict):
            continue
        tasks = _dict(data.get("results"))
        if task is None or task in tasks or len(tasks) == 1:
            return data, file_sha256(path)
    return {}, None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _input_text(line: dict[str, Any]) -> str | None:
    doc = line.get("doc")
    if isinstance(doc, dict):
        for key in INPUT_KEYS:
            if isinstance(doc.get(key), str):
                return str(doc[key])
    args = line.get("arguments")
    if isinstance(args, dict) and args:
        first = next(iter(args.values()))
        if isinstance(first, dict) and isinstance(first.get("arg_0"), str):
            return str(first["arg_0"])
    return None


def _scores(line: dict[str, Any], where: str) -> list[Score]:
    names = line.get("metrics")
    if not isinstance(names, list):
        raise _refuse(f"{where}: 'metrics' is not a list of metric names", where)
    out = []
    for name in names:
        raw = line.get(str(name))
        if isinstance(raw, bool | int | float):
            out.append(tool_score(TOOL, str(name), float(raw), raw))
        else:
            reason = "no value" if raw is None else "not a single number"
            out.append(
                Score(
                    grader=TOOL,
                    metric=str(name),
                    value=0.0,
                    status="skipped",
                    detail={"value": raw if isinstance(raw, str) else None, "reason": reason},
                )
            )
    return out


def _sample(line: Any, where: str, model: str) -> ForeignSample:
    if not isinstance(line, dict) or "doc_id" not in line:
        raise _refuse(f"{where}: not an lm-eval sample (no doc_id)", where)
    resps = line.get("filtered_resps")
    answer = resps[0] if isinstance(resps, list) and resps else resps
    if isinstance(answer, list):  # a filter that keeps every repeat: the first
        answer = answer[0] if answer else ""
    if not isinstance(answer, str):
        raise _refuse(f"{where}: filtered_resps holds no text answer", where)
    doc = line.get("doc")
    case_id = doc.get("id") if isinstance(doc, dict) else None
    raw_resps = line.get("resps")
    messages: list[dict[str, JsonValue]] = []
    prompt = _input_text(line)
    if prompt is not None:
        messages.append({"role": "user", "content": prompt})
    if isinstance(raw_resps, list):
        for group in raw_resps:
            for text in group if isinstance(group, list) else [group]:
                if isinstance(text, str):
                    messages.append({"role": "assistant", "content": text})
    return ForeignSample(
        sample_id=str(line["doc_id"]),
        case_id=case_id if isinstance(case_id, str) else None,
        sample=0,
        input_text=prompt,
        answer=answer,
        error=None,
        trace=Trace(messages=messages, model=model, events=[_note(line)]),
        scores=_scores(line, where),
    )


def _note(line: dict[str, Any]) -> dict[str, JsonValue]:
    return {
        "type": "note",
        "text": f"lm-eval filter {line.get('filter')!s}",
        "target": line.get("target") if isinstance(line.get("target"), str) else None,
        "doc_hash": line.get("doc_hash") if isinstance(line.get("doc_hash"), str) else None,
    }


def _lines(path: Path, limits: LogLimits) -> Any:
    """``(line number, parsed JSON)`` of each non-blank line, each bounded in bytes."""
    size = path.stat().st_size
    if size > limits.max_file_bytes:
        raise _refuse(f"{path.name}: {size} bytes; at most {limits.max_file_bytes} are read")
    with path.open("rb") as fh:
        number = 0
        while line := fh.readline(limits.max_entry_bytes + 1):
            number += 1
            if len(line) > limits.max_entry_bytes:
                raise _refuse(
                    f"{path.name} line {number}: longer than {limits.max_entry_bytes} bytes"
                )
            if line.strip():
                try:
                    yield number, orjson.loads(line)
                except orjson.JSONDecodeError as exc:
                    raise _refuse(f"{path.name} line {number}: not JSON: {exc}") from exc


def read_lm_eval_output(
    root: Path, limits: LogLimits, task: str | None = None, filter_name: str | None = None
) -> ForeignLog:
    """One task of an lm-eval output folder (or one samples file) as a :class:`ForeignLog`.

    Raises:
        ContentConflict (an InvalidInput, HTTP 409): no samples file; several tasks without
            ``task``; an unknown ``filter`` (the filters found listed); a malformed line (file
            and line named); a results JSON over the size bound; more than 100,000 samples.
    """
    path, found_task = _pick_samples(root, task)
    results, results_sha = _results(root, task or found_task, limits.max_entry_bytes)
    tasks = _dict(results.get("results"))
    name = task or found_task or (next(iter(tasks)) if len(tasks) == 1 else "task")
    config = _dict(results.get("config"))
    args = _dict(config.get("model_args"))
    named = args.get("model") or args.get("pretrained")
    model = str(named or config.get("model") or results.get("model_name") or "model")
    samples: list[ForeignSample] = []
    filters: list[str] = []
    for number, line in _lines(path, limits):
        where = f"{path.name} line {number}"
        got = str(line.get("filter", "none")) if isinstance(line, dict) else "none"
        if got not in filters:
            filters.append(got)
        chosen = filter_name or filters[0]
        if got == chosen:
            samples.append(_sample(line, where, model))
            check_sample_count(len(samples), path.name)
    if filter_name is not None and filter_name not in filters:
        raise _refuse(
            f"no filter {filter_name!r} in {path.name} (found: {', '.join(filters)})", "filter"
        )
    chosen = filter_name or (filters[0] if filters else "none")
    meta = _dict(_dict(_dict(results.get("configs")).get(name)).get("metadata"))
    dataset = meta.get("benchbook_dataset")
    record: dict[str, JsonValue] = {
        "tool": TOOL,
        "tool_version": results.get("lm_eval_version"),
        "task": name,
        "model": model,
        "model_args": config.get("model_args"),
        "filter": chosen,
        "filters": list(filters),
        "samples_file": path.name,
        "log_sha256": file_sha256(path),
        "results_sha256": results_sha,
        "dataset": dataset if isinstance(dataset, str) else None,
        "reported": _reported(tasks.get(name)),
    }
    version = results.get("lm_eval_version")
    return ForeignLog(
        tool=TOOL,
        tool_version=version if isinstance(version, str) else None,
        task=name,
        model=model,
        dataset_name=dataset if isinstance(dataset, str) else None,
        record=record,
        metrics=sorted({s.metric for smp in samples for s in smp.scores}),
        samples=samples,
    )


def _reported(raw: Any) -> dict[str, JsonValue]:
    """The task's aggregated metrics (``"exact_match,strict-match": 0.2``), numbers only."""
    if not isinstance(raw, dict):
        return {}
    return {
        str(k): float(v)
        for k, v in raw.items()
        if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
    }
