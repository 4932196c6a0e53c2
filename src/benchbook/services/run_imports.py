"""Runs another tool made, imported as ordinary reported runs (issue 31).

``import_inspect_run`` reads one Inspect AI log, ``import_lm_eval_run`` one lm-eval task's
``--log_samples`` output. Both then do the same (:func:`_register`):

1. **Match** each (sample, epoch) to a case of the dataset version: by id (the sample's own id,
   or the ``id`` of an lm-eval document from a Benchbook export) when its input text, if the
   log recorded one, is the case's task; else by the sha256 of the input text against the
   version's tasks. Samples matching nothing are listed by id and nothing is registered unless
   ``allow_unmatched`` (then they are left out). A log whose dataset name is ``id@version`` of
   another version is refused, as is one matching no case at all.
2. **Register** the matched answers through ``report_run``'s own path
   (:func:`~benchbook.services.run_reports.store_reported_run`): Benchbook's graders grade them
   into the run's own scorecard; the tool, its version, task, model and the log's sha256 go to
   ``reproducibility.import``.
3. **Keep the tool's scores** as an imported scorecard of the run (grader ``inspect`` or
   ``lm-eval``, one metric per scorer/metric), beside Benchbook's.

Who may import: whoever may report a run (``runs:write``).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import orjson
from pydantic import JsonValue

from benchbook.contracts.dataset import GraderSpec, RunGrader
from benchbook.contracts.run import ReportedResult, ReportRunRequest, RunPlan
from benchbook.contracts.run_imports import ImportedRun, ImportInspectRequest, ImportLmEvalRequest
from benchbook.datasets.versions import is_semver
from benchbook.errors import ContentConflict, InvalidInput, NotFound
from benchbook.eval.grading import decide_passed, grader_error_of
from benchbook.eval.interop.foreign import ForeignLog, ForeignSample
from benchbook.eval.interop.inspect_logs import LogLimits, log_format, read_inspect_log
from benchbook.eval.interop.lm_eval_samples import read_lm_eval_output
from benchbook.services.bounds import check_text
from benchbook.services.context import Context
from benchbook.services.resolve import resolve_version
from benchbook.services.run_reports import store_reported_run
from benchbook.services.runs import iter_cases, load_run, split_ref
from benchbook.services.scorecards import store_scorecard
from benchbook.store.runs import ScoreRow

SHOWN = 20
LISTED = 100
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def _limits(ctx: Context) -> LogLimits:
    return LogLimits(ctx.settings.max_upload_bytes, ctx.settings.max_document_bytes)


def _sha(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def derived_harness(log: ForeignLog) -> str:
    """``<tool>-<task>-<model>@<tool version>`` with unsafe characters as ``-`` (``0.0.0``
    when the tool's version is not SemVer), e.g. ``inspect-gsm8k-mockllm-model@0.3.285``."""
    raw = _UNSAFE.sub("-", f"{log.tool}-{log.task}-{log.model}").strip("-._")[:128]
    version = log.tool_version if log.tool_version and is_semver(log.tool_version) else "0.0.0"
    return f"{raw or log.tool}@{version}"


def _check_dataset_name(log: ForeignLog, exact: str) -> None:
    """Refuse a log whose dataset is named ``id@version`` of another version."""
    name = log.dataset_name or ""
    if "@" in name and name != exact:
        message = f"the log ran on dataset {name!r}, not {exact!r}; import it onto {name}"
        raise ContentConflict(message, {"errors": [{"path": "dataset", "message": message}]})


@contextmanager
def _inline_file(
    ctx: Context, text: str | None, encoded: str | None, suffix: str
) -> Iterator[Path]:
    """Inline log content (``text`` or base64) in a temporary file, size-checked first."""
    limit = ctx.settings.max_upload_bytes
    if encoded is not None:
        if len(encoded) // 4 * 3 > limit:
            raise ContentConflict(f"content_base64 decodes to more than {limit} bytes")
        try:
            data = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise ContentConflict(f"content_base64 is not base64: {exc}") from exc
    else:
        data = (text or "").encode("utf-8", "surrogatepass")
        if len(data) > limit:
            raise ContentConflict(f"the inline log is more than {limit} bytes")
    with tempfile.TemporaryDirectory(prefix="benchbook-log-") as tmp:
        path = Path(tmp) / f"inline{suffix}"
        path.write_bytes(data)
        del data
        yield path


def _one_source(file: Path | None, *inline: str | None) -> None:
    given = (file is not None) + sum(x is not None for x in inline)
    if given != 1:
        raise ContentConflict(
            "send exactly one log: a file, or inline content (text or content_base64)",
            {"errors": [{"path": "text", "message": "one log source expected"}]},
        )


def _existing(file: Path, what: str) -> None:
    """A local path that does not exist is NotFound (the CLI's argument; an upload always is)."""
    if not file.exists():
        message = f"{file}: no such {what}"
        raise NotFound(message, {"errors": [{"path": str(file), "message": f"no such {what}"}]})


def import_inspect_run(
    ctx: Context,
    request: ImportInspectRequest,
    file: Path | None = None,
    file_name: str | None = None,
) -> ImportedRun:
    """Import one Inspect AI log as a reported run with its imported scorecard.

    Args:
        request: ``{dataset, harness?, graders?, allow_unmatched?, text? | content_base64?}``.
        file: the log on this machine (the CLI) or as uploaded (HTTP); ``file_name`` its name
            as sent (``.eval`` or ``.json``).

    Returns:
        ``{run, imported_scorecard, tool, tool_version, samples, matched_by_id,
        matched_by_input, unmatched}``.

    Raises:
        Forbidden: without ``runs:write``.
        NotFound: unknown dataset or version; ``file`` does not exist.
        ContentConflict (an InvalidInput, HTTP 409): no log or more than one source; a folder; an
            oversized, truncated, zip-bomb or unreadable log; the ``inspect`` extra missing; a
            log of another dataset version; unmatched samples without ``allow_unmatched``
            (listed); no sample matching a case. Nothing is registered.
    """
    ctx.require("runs:write")
    exact = _exact(ctx, request.dataset)
    _one_source(file, request.text, request.content_base64)
    if file is not None:
        _existing(file, "file")
        if file.is_dir():
            raise ContentConflict(f"{file}: is a folder, not an Inspect log (.eval or .json)")
        log = read_inspect_log(file, _limits(ctx), file_name)
    else:
        suffix = ".json" if request.text is not None else ".log"
        with _inline_file(ctx, request.text, request.content_base64, suffix) as path:
            fmt = log_format(path, None)
            log = read_inspect_log(path, _limits(ctx), f"inline.{fmt}")
    return _register(ctx, exact, log, request.harness, request.graders, request.allow_unmatched)


def import_lm_eval_run(
    ctx: Context,
    request: ImportLmEvalRequest,
    file: Path | None = None,
    file_name: str | None = None,
) -> ImportedRun:
    """Import one lm-eval task's ``--log_samples`` output as a reported run with its imported
    scorecard (``filtered_resps`` of the chosen filter as the answer, each metric a score).

    Args:
        request: ``{dataset, harness?, graders?, allow_unmatched?, task?, filter?,
            samples_text? , results_text?}``.
        file: the output folder (``lm_eval --output_path``; searched for ``samples_*.jsonl``
            and ``results_*.json``) or one ``samples_<task>_*.jsonl`` file; ``file_name``
            its name as sent.

    Returns:
        As :func:`import_inspect_run`, ``tool`` = ``lm-eval``.

    Raises:
        Forbidden: without ``runs:write``.
        NotFound: unknown dataset or version; ``file`` does not exist.
        ContentConflict (an InvalidInput, HTTP 409): no samples or more than one source;
            several tasks without ``task``; an unknown filter (the known ones listed); a
            malformed line (named by file and line); unmatched samples without
            ``allow_unmatched``; no sample matching a case. Nothing is registered.
    """
    ctx.require("runs:write")
    exact = _exact(ctx, request.dataset)
    _one_source(file, request.samples_text)
    limits = _limits(ctx)
    if file is not None:
        _existing(file, "file or folder")
        log = read_lm_eval_output(file, limits, request.task, request.filter)
    else:
        with tempfile.TemporaryDirectory(prefix="benchbook-lm-eval-") as tmp:
            folder = Path(tmp)
            for name, text in (
                ("samples_inline.jsonl", request.samples_text),
                ("results_inline.json", request.results_text),
            ):
                if text is not None:
                    with _inline_file(ctx, text, None, ".txt") as path:
                        path.replace(folder / name)
            log = read_lm_eval_output(folder, limits, request.task, request.filter)
    return _register(ctx, exact, log, request.harness, request.graders, request.allow_unmatched)


def _exact(ctx: Context, dataset: str) -> str:
    """``id@version`` of the dataset reference (first: an unknown one is 404 whatever else)."""
    dataset_id, ref = split_ref(dataset, "dataset")
    with ctx.engine.connect() as conn:
        version = resolve_version(conn, ctx.workspace, dataset_id, ref)
    return f"{version.dataset_id}@{version.version}"


def _match(
    ctx: Context, exact: str, samples: list[ForeignSample]
) -> tuple[list[tuple[str, ForeignSample]], int, list[str]]:
    """``([(case_id, sample)], matched by id, unmatched sample ids)`` (module docstring)."""
    dataset_id, version = exact.split("@", 1)
    tasks: dict[str, bytes] = {}
    by_hash: dict[bytes, str] = {}
    with ctx.engine.connect() as conn:
        row = resolve_version(conn, ctx.workspace, dataset_id, version)
        for _, case in iter_cases(conn, row.pk):
            digest = _sha(case.task)
            tasks[case.id] = digest
            by_hash.setdefault(digest, case.id)
    matched: list[tuple[str, ForeignSample]] = []
    by_id, unmatched = 0, []
    for s in samples:
        sent = _sha(s.input_text) if s.input_text is not None else None
        if s.case_id is not None and s.case_id in tasks and sent in (None, tasks[s.case_id]):
            matched.append((s.case_id, s))
            by_id += 1
        elif sent is not None and sent in by_hash:
            matched.append((by_hash[sent], s))
        else:
            unmatched.append(s.sample_id)
    return matched, by_id, unmatched


def _refuse_unmatched(exact: str, unmatched: list[str], total: int, allow: bool) -> None:
    ids = list(dict.fromkeys(unmatched))
    if ids and (not allow or len(unmatched) == total):
        shown = ", ".join(ids[:SHOWN])
        hint = "" if allow else "; pass allow_unmatched (--allow-unmatched) to leave them out"
        raise ContentConflict(
            f"{len(ids)} sample(s) match no case of {exact} by id or input text: {shown}{hint}",
            {"unmatched": ids[:LISTED], "errors": [{"path": "samples", "message": "unmatched"}]},
        )


def _refuse_repeats(matched: list[tuple[str, ForeignSample]]) -> None:
    """Two samples of one (case, epoch) — a log holding a question twice — name both."""
    first: dict[tuple[str, int], str] = {}
    repeats = []
    for case_id, s in matched:
        key = (case_id, s.sample)
        if key in first:
            repeats.append(
                f"{s.sample_id} repeats {first[key]} (case {case_id}, sample {s.sample})"
            )
        else:
            first[key] = s.sample_id
    if repeats:
        raise ContentConflict(
            f"{len(repeats)} sample(s) match a case another sample matched: "
            + "; ".join(repeats[:SHOWN]),
            {"errors": [{"path": "samples", "message": r} for r in repeats[:LISTED]]},
        )


def _register(
    ctx: Context,
    exact: str,
    log: ForeignLog,
    harness: str | None,
    graders: list[RunGrader] | None,
    allow_unmatched: bool,
) -> ImportedRun:
    """Match, register through the reported-run path, store the imported scorecard."""
    _check_dataset_name(log, exact)
    if not log.samples:
        raise ContentConflict("the log holds no samples", {"errors": [{"path": "samples"}]})
    matched, by_id, unmatched = _match(ctx, exact, log.samples)
    _refuse_unmatched(exact, unmatched, len(log.samples), allow_unmatched)
    _refuse_repeats(matched)
    results = []
    for case_id, s in matched:
        result = ReportedResult(
            case_id=case_id, sample=s.sample, answer=s.answer, error=s.error, trace=s.trace
        )
        try:
            check_text(result.model_dump(mode="json"), f"samples.{s.sample_id}")
        except InvalidInput as exc:  # what the log holds, not how the request is formed
            raise ContentConflict(exc.message, exc.details) from exc
        results.append(result)
    request = ReportRunRequest(
        dataset=exact, harness=harness or derived_harness(log), graders=graders, results=results
    )
    del results
    run = store_reported_run(ctx, request, imported=log.record)
    rows: list[ScoreRow] = []
    for case_id, s in matched:
        status = "error" if s.error is not None else "ok"
        dumped = orjson.dumps([x.model_dump(mode="json") for x in s.scores]).decode()
        failed = grader_error_of(s.scores) if status == "ok" else None
        rows.append((case_id, s.sample, decide_passed(status, s.scores), dumped, failed))
    config: dict[str, JsonValue] = {
        "source": "import",
        "tool_version": log.tool_version,
        "metrics": list(log.metrics),
        "log_sha256": log.record.get("log_sha256"),
    }
    plan = RunPlan(graders=[GraderSpec(id=log.tool, config=config)])
    with ctx.engine.connect() as conn:
        run_row = load_run(conn, ctx, run.id)
    card = store_scorecard(ctx, run_row, plan, rows)
    return ImportedRun(
        run=run,
        imported_scorecard=card,
        tool="inspect" if log.tool == "inspect" else "lm-eval",
        tool_version=log.tool_version,
        samples=len(log.samples),
        matched_by_id=by_id,
        matched_by_input=len(matched) - by_id,
        unmatched=list(dict.fromkeys(unmatched))[:LISTED],
    )


__all__ = ["derived_harness", "import_inspect_run", "import_lm_eval_run"]
