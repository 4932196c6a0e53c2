"""Inspect AI logs (``.eval`` zip or ``.json``) read with Inspect's own reader (issue 31).

Format and fields: ``inspect_ai.log`` (``read_eval_log``, the header first, then the whole log
without the event log, store and attachments; https://inspect.aisi.org.uk/eval-logs.html).
Nothing here parses Inspect's format by hand; the only look inside the zip is its central
directory, to refuse a log before Inspect reads it:

- the file is larger than ``max_file_bytes`` (a 2 GB log is refused from its size alone);
- a ``.json`` log (one JSON document, parsed whole by Inspect) over ``max_entry_bytes``;
- an ``.eval`` whose zip directory cannot be read (truncated, not a zip), that declares an
  entry (the header, one sample) over ``max_entry_bytes`` uncompressed or entries over
  ``max_file_bytes`` in all — a zip bomb.

Per sample: ``id`` → ``sample_id``/``case_id``, ``epoch`` → ``sample`` (epoch − 1), ``input``
(text, or the user messages' text) → ``input_text``, ``output.completion`` → ``answer``,
``error.message`` → ``error``; messages, tool calls, per-model token usage (``events`` of type
``usage``), recorded cost (``total_cost``), ``started_at`` and ``total_time`` → the trace. Each
scorer's value becomes a :func:`~benchbook.eval.interop.foreign.tool_score` read by Inspect's
own ``value_to_float`` (C = 1, I = 0, P = 0.5, N = 0); a dict value gives one metric per key
(``<scorer>/<key>``).
"""

from __future__ import annotations

import importlib
import zipfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import JsonValue

from benchbook.contracts.run import Trace, Usage
from benchbook.contracts.score import Score
from benchbook.errors import ContentConflict, InvalidInput
from benchbook.eval.interop.foreign import (
    ForeignLog,
    ForeignSample,
    check_sample_count,
    file_sha256,
    tool_score,
)

TOOL = "inspect"
INSTALL_HINT = "pip install 'benchbook[inspect]'"
#: Sample fields never needed here (the event log, the store, attachments): not parsed.
SKIPPED_FIELDS = {"events", "store", "attachments", "events_data", "timelines"}


@dataclass(frozen=True)
class LogLimits:
    """Bounds checked before a log is read: the file's size and one document's (bytes)."""

    max_file_bytes: int
    max_entry_bytes: int


def _refuse(message: str, path: str = "log") -> ContentConflict:
    return ContentConflict(message, {"errors": [{"path": path, "message": message}]})


def _inspect_log_module() -> Any:
    try:
        return importlib.import_module("inspect_ai.log")
    except ImportError as exc:
        raise _refuse(
            f"reading Inspect logs needs the 'inspect' extra, not installed here: {INSTALL_HINT}"
        ) from exc


def log_format(path: Path, name: str | None) -> str:
    """``eval`` or ``json``: by the name's extension, else by the first bytes (``PK`` / ``{``).

    Raises:
        ContentConflict (an InvalidInput, HTTP 409): neither.
    """
    suffix = Path(name or path.name).suffix.lower()
    if suffix in (".eval", ".json"):
        return suffix[1:]
    with path.open("rb") as fh:
        head = fh.read(64).lstrip()
    if head.startswith(b"PK"):
        return "eval"
    if head.startswith(b"{"):
        return "json"
    raise _refuse(f"{name or path.name}: not an Inspect log (.eval zip or .json)")


def check_log(path: Path, fmt: str, limits: LogLimits, name: str) -> None:
    """Refuse an oversized, truncated or bomb-shaped log before Inspect reads it (module
    docstring); reads at most the zip's central directory."""
    size = path.stat().st_size
    if size > limits.max_file_bytes:
        raise _refuse(
            f"{name}: the log is {size} bytes; at most {limits.max_file_bytes} are read"
            " (BENCHBOOK_MAX_UPLOAD_BYTES)"
        )
    if fmt == "json":
        if size > limits.max_entry_bytes:
            raise _refuse(
                f"{name}: a .json log is read whole and this one is {size} bytes; at most"
                f" {limits.max_entry_bytes} (BENCHBOOK_MAX_DOCUMENT_BYTES) — write .eval logs"
            )
        return
    try:
        with zipfile.ZipFile(path) as zf:
            entries = zf.infolist()
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise _refuse(f"{name}: not a readable .eval log (truncated or not a zip): {exc}") from exc
    total = sum(info.file_size for info in entries)
    if total > limits.max_file_bytes:
        raise _refuse(
            f"{name}: the log's entries are {total} bytes uncompressed; at most"
            f" {limits.max_file_bytes} are read (BENCHBOOK_MAX_UPLOAD_BYTES)"
        )
    for info in entries:
        if info.file_size > limits.max_entry_bytes:
            raise _refuse(
                f"{name}: entry {info.filename[:200]!r} is {info.file_size} bytes uncompressed;"
                f" at most {limits.max_entry_bytes} (BENCHBOOK_MAX_DOCUMENT_BYTES)"
            )


def _dump(value: Any) -> dict[str, JsonValue]:
    dumped: dict[str, JsonValue] = value.model_dump(mode="json", exclude_none=True)
    return dumped


def _input_text(raw: Any) -> str | None:
    if isinstance(raw, str):
        return raw
    texts = [m.text for m in raw if getattr(m, "role", None) == "user"]
    return "\n".join(texts) if texts else None


def _started_at(raw: Any) -> datetime | None:
    if raw is None or isinstance(raw, datetime):
        return raw
    try:
        return datetime.fromisoformat(str(raw))
    except ValueError:
        return None


def _trace(sample: Any, default_model: str) -> Trace:
    """Messages, tool calls, usage per model, cost and timing of one sample (module docstring)."""
    messages = [_dump(m) for m in sample.messages]
    tool_calls = [
        _dump(call)
        for m in sample.messages
        if getattr(m, "role", None) == "assistant"
        for call in (m.tool_calls or [])
    ]
    events: list[dict[str, JsonValue]] = []
    usage = Usage()
    costs: list[float] = []
    for model, used in (sample.model_usage or {}).items():
        usage.input_tokens += used.input_tokens
        usage.output_tokens += used.output_tokens
        if used.total_cost is not None:
            costs.append(float(used.total_cost))
        events.append({"type": "usage", "model": model, **_dump(used)})
    if sample.limit is not None:
        events.append({"type": "note", "text": f"limit reached: {sample.limit.type}"})
    output_model = getattr(sample.output, "model", None)
    return Trace(
        messages=messages,
        tool_calls=tool_calls,
        usage=usage,
        model=output_model or default_model,
        cost_usd=sum(costs) if costs else None,
        started_at=_started_at(sample.started_at),
        duration_ms=max(0, round((sample.total_time or 0.0) * 1000)),
        events=events,
    )


def _scores(sample: Any, to_float: Any) -> list[Score]:
    out: list[Score] = []
    for name, score in (sample.scores or {}).items():
        detail = {"answer": score.answer, "explanation": score.explanation}
        value = score.value
        if isinstance(value, dict):
            for key, item in value.items():
                out.append(tool_score(TOOL, f"{name}/{key}", to_float(item), item, **detail))
        elif isinstance(value, list):
            out.append(
                Score(
                    grader=TOOL,
                    metric=name,
                    value=0.0,
                    status="skipped",
                    detail={"value": value, "reason": "a list value has no single number"},
                )
            )
        else:
            out.append(tool_score(TOOL, name, to_float(value), value, **detail))
    return out


def _sample(sample: Any, default_model: str, to_float: Any) -> ForeignSample:
    sid = str(sample.id)
    return ForeignSample(
        sample_id=sid,
        case_id=sid,
        sample=max(0, int(sample.epoch) - 1),
        input_text=_input_text(sample.input),
        answer=sample.output.completion if sample.output is not None else "",
        error=sample.error.message if sample.error is not None else None,
        trace=_trace(sample, default_model),
        scores=_scores(sample, to_float),
    )


def _header_record(header: Any, sha256: str, fmt: str) -> dict[str, JsonValue]:
    reported: dict[str, JsonValue] = {}
    for score in header.results.scores if header.results else []:
        reported[score.name] = {name: m.value for name, m in score.metrics.items()}
    spec = header.eval
    return {
        "tool": TOOL,
        "tool_version": (spec.packages or {}).get("inspect_ai"),
        "format": fmt,
        "log_sha256": sha256,
        "task": spec.task,
        "task_version": spec.task_version,
        "model": spec.model,
        "model_args": _dump(spec)["model_args"] if spec.model_args else {},
        "dataset": spec.dataset.name,
        "epochs": spec.config.epochs,
        "eval_id": spec.eval_id,
        "run_id": spec.run_id,
        "created": str(spec.created),
        "status": header.status,
        "reported": reported,
    }


def read_inspect_log(path: Path, limits: LogLimits, name: str | None = None) -> ForeignLog:
    """One Inspect log as a :class:`ForeignLog` (module docstring).

    Args:
        path: the log file; ``name`` the name it was sent as (its extension picks the format).
        limits: the size bounds checked before reading.

    Raises:
        ContentConflict (an InvalidInput, HTTP 409): the ``inspect`` extra is missing; an
            oversized, truncated or malformed log, or one Inspect cannot read (its message),
            each naming the log; more than 100,000 samples.
    """
    shown = name or path.name
    fmt = log_format(path, name)
    check_log(path, fmt, limits, shown)
    log_mod = _inspect_log_module()
    from inspect_ai.scorer import value_to_float

    to_float = value_to_float()
    try:
        header = log_mod.read_eval_log(str(path), header_only=True, format=fmt)
        planned = (header.eval.dataset.samples or 0) * max(1, header.eval.config.epochs or 1)
        check_sample_count(planned, shown)
        # The whole log at once: per-sample reads reopen the zip each time (90 s against 15 s
        # for 2,638 samples here); the bounds checked above cap what it holds.
        full = log_mod.read_eval_log(str(path), exclude_fields=SKIPPED_FIELDS, format=fmt)
        check_sample_count(len(full.samples or []), shown)
        samples = [_sample(raw, header.eval.model, to_float) for raw in full.samples or []]
        del full
    except InvalidInput:
        raise
    except Exception as exc:  # Inspect's own errors (bad JSON, schema, zip entries) name it
        raise _refuse(
            f"{shown}: Inspect cannot read this log: {type(exc).__name__}: {exc}"
        ) from exc
    names = sorted({s.metric for smp in samples for s in smp.scores})
    return ForeignLog(
        tool=TOOL,
        tool_version=(header.eval.packages or {}).get("inspect_ai"),
        task=header.eval.task,
        model=header.eval.model,
        dataset_name=header.eval.dataset.name,
        record=_header_record(header, file_sha256(path), fmt),
        metrics=names,
        samples=samples,
    )
