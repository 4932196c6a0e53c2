"""The ``localization`` grader (SPEC I, LOCALIZATION §4–5): where the fix is vs what the
harness looked at, by :func:`benchbook.eval.localization.score_instance`.

Inputs, all read after the harness finished:

- **gold**: the case's ``gold_context`` (``[{file, start_line, end_line}]``, JSON text or
  decoded; ``/workspace/<checkout>/`` prefixes stripped) or, without it, its gold ``patch``
  (:func:`benchbook.datasets.gold.gold_locations`, all in base numbering and base paths): the
  removed lines, the base line each added block follows and the whole base definition
  enclosing the added lines (SPEC I); a renamed file by its **old** path (the one that exists
  at the base commit); a file with no such line (a pure rename, a binary patch, an added file)
  a file-level location;
- **prediction**: the final answer as JSON ``{files, spans, symbols, steps}`` (the upstream
  ``pred_*`` names are accepted too), or plain text with one path a line;
- **trajectory**: without ``steps`` in the answer, the trace's read tool calls become steps — a
  file read (``read``/``read_file``/``view``/``open`` with ``path`` and optional
  ``start_line``/``end_line``) or a shell ``cat FILE`` / ``sed -n 'A,Bp' FILE``;
- **EditLoc**: the run's repository diff (``trace.env_snapshot.diff``); empty → not applicable;
- **checkout**: the case workspace read at the base commit (``git show REF:path``; the
  working tree when the workspace is not a git repository).

The score's ``value`` is the final line-level coverage; ``detail`` carries every metric. Without
the workspace (a rescore of a saved run) the checkout is read from the mirror cache the run
cloned from, so a rescore gives the run's own numbers; with neither the grader is ``skipped``:
span and symbol levels need the repository at the base commit.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

import orjson
from pydantic import JsonValue

from benchbook.contracts.dataset import Case, GitSource, GraderSpec
from benchbook.contracts.score import Score
from benchbook.datasets.contextbench import decode_gold_context, normalize_path
from benchbook.datasets.gold import FileGold, gold_locations, patch_lines
from benchbook.errors import InvalidInput
from benchbook.eval.checkout import Checkout
from benchbook.eval.graders.verdicts import error, skipped
from benchbook.eval.localization import Prediction, score_instance
from benchbook.eval.submission import Submission
from benchbook.runtime.environments.repo import RepoError, mirror_path

READ_TOOLS = frozenset({"read", "read_file", "view", "open", "open_file"})
SHELL_TOOLS = frozenset({"bash", "shell", "run", "execute", "terminal"})
_SED = re.compile(r"^(\d+)(?:,(\d+))?p$")


def _file_spans(fg: FileGold) -> list[dict[str, Any]]:
    ranges = sorted({(r.start, r.end) for r in [*fg.removed, *fg.inserted, *fg.enclosing]})
    path = fg.path if fg.status == "added" else fg.old_path
    if not ranges:  # a file-level location: counts at the file level only
        return [{"file": path, "start_line": 0, "end_line": 0}]
    return [{"file": path, "start_line": start, "end_line": end} for start, end in ranges]


def gold_spans(case: Case, checkout: Checkout | None = None) -> list[dict[str, Any]]:
    """The case's gold spans (see the module docstring); without ``checkout`` a patch's
    insertions have no enclosing definition.

    Raises:
        InvalidInput: ``gold_context`` or ``patch`` is malformed, or the patch does not fit
            the base tree.
        ValueError: the case has neither.
    """
    meta = case.metadata
    if meta.get("gold_context") is not None:
        spans = decode_gold_context(meta["gold_context"], f"case {case.id}")
        return [{**s, "file": normalize_path(s["file"])[0]} for s in spans]
    patch = meta.get("patch")
    if isinstance(patch, str) and patch.strip():
        files = gold_locations(patch, checkout.content) if checkout else patch_lines(patch)
        return [span for fg in files for span in _file_spans(fg)]
    raise ValueError("the case has no gold_context and no patch to localize against")


def _first(data: dict[str, Any], *keys: str) -> Any:
    return next((data[k] for k in keys if data.get(k) is not None), None)


def parse_prediction(answer: str, model_patch: str = "") -> Prediction:
    """The harness's final answer as a :class:`Prediction` (JSON object or one path a line)."""
    try:
        data = orjson.loads(answer)
    except orjson.JSONDecodeError:
        data = None
    if not isinstance(data, dict):
        files = [line.strip() for line in answer.splitlines() if line.strip()]
        return Prediction(files=files, model_patch=model_patch)
    spans = _first(data, "spans", "pred_spans") or {}
    symbols = _first(data, "symbols", "pred_symbols") or {}
    files = _first(data, "files", "pred_files")
    return Prediction(
        files=[str(f) for f in (files if files is not None else [*spans, *symbols])],
        spans={str(k): list(v) for k, v in spans.items()},
        symbols={str(k): [str(n) for n in v] for k, v in symbols.items()},
        steps=list(_first(data, "steps", "pred_steps") or []),
        model_patch=model_patch,
    )


def _step(path: str, start: Any = None, end: Any = None) -> dict[str, Any]:
    step: dict[str, Any] = {"files": [path]}
    if isinstance(start, int) and start > 0:
        last = end if isinstance(end, int) and end >= start else start
        step["spans"] = {path: [{"start": start, "end": last}]}
    return step


def _shell_step(command: str) -> dict[str, Any] | None:
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if len(words) == 2 and words[0] in ("cat", "head", "less"):
        return _step(words[1])
    if len(words) == 4 and words[:2] == ["sed", "-n"] and (m := _SED.match(words[2])):
        return _step(words[3], int(m.group(1)), int(m.group(2) or m.group(1)))
    return None


def steps_from_tool_calls(tool_calls: list[dict[str, JsonValue]]) -> list[dict[str, Any]]:
    """Retrieval steps from a trace's tool calls (LOCALIZATION §5); other calls are ignored.

    A call is ``{name, arguments|input}``; ``arguments`` may be JSON text.
    """
    steps = []
    for call in tool_calls:
        name = str(call.get("name") or call.get("tool") or "")
        args: Any = call.get("arguments", call.get("input")) or {}
        if isinstance(args, str):
            try:
                args = orjson.loads(args)
            except orjson.JSONDecodeError:
                args = {"command": args}
        if not isinstance(args, dict):
            continue
        path = _first(args, "path", "file", "file_path", "filename")
        if name in READ_TOOLS and isinstance(path, str):
            steps.append(_step(path, args.get("start_line"), args.get("end_line")))
        elif name in SHELL_TOOLS and isinstance(args.get("command"), str):
            step = _shell_step(args["command"])
            if step is not None:
                steps.append(step)
    return steps


def submitted_prediction(submission: Submission) -> Prediction:
    """What the harness localized: the answer's prediction, the trace's read tool calls as
    steps when the answer has none, and the repository diff as ``model_patch``."""
    trace = submission.trace
    prediction = parse_prediction(submission.answer, trace.env_snapshot.diff or "")
    if prediction.steps:
        return prediction
    return Prediction(
        prediction.files,
        prediction.spans,
        prediction.symbols,
        steps_from_tool_calls(trace.tool_calls),
        prediction.model_patch,
    )


def base_checkout(submission: Submission, case: Case) -> Checkout | None:
    """The repository at the case's base commit: the workspace while it exists, else the
    mirror cache (``<mirrors>/<host>/<owner>/<repo>.git``) when it holds the repository;
    None when neither is there."""
    source = getattr(case.env, "source", None)
    ref = source.ref if isinstance(source, GitSource) else "HEAD"
    workdir = submission.workdir
    if workdir is not None:
        if (workdir / ".git").exists():
            return Checkout.from_git(workdir, ref)
        return Checkout.from_dir(workdir)
    if submission.mirrors is None or not isinstance(source, GitSource):
        return None
    try:
        mirror = mirror_path(submission.mirrors, source.git)
    except RepoError:
        return None
    return Checkout.from_git(mirror, ref) if (mirror / "HEAD").is_file() else None


def grade_localization(spec: GraderSpec, submission: Submission, case: Case) -> Score:
    """Score what the harness localized against the case's gold (module docstring)."""
    checkout = base_checkout(submission, case)
    if checkout is None:
        return skipped(
            spec, "localization needs the case's checkout at the base commit (workspace or mirror)"
        )
    try:
        gold = gold_spans(case, checkout)
        result = score_instance(gold, submitted_prediction(submission), checkout)
    except (ValueError, InvalidInput) as exc:
        return error(spec, f"case {case.id}: {exc}")
    detail: dict[str, JsonValue] = orjson.loads(orjson.dumps(result))
    if "error" in result:  # upstream's error row: out of the aggregates, the score says why
        return skipped(spec, f"{result['error']}: {result['reason']}", detail)
    return Score(
        grader=spec.id,
        metric=spec.id,
        value=result["final"]["line"]["coverage"],
        passed=None,
        detail=detail,
    )
