"""Code-localization metrics (SPEC I; LOCALIZATION §4): pure functions of gold, prediction and
the checkout at the base commit.

Definitions follow the ContextBench scorer (arXiv 2602.05892, ``EuniAI/ContextBench``; its code
where code and paper differ). Per instance, at four levels, with G = gold and P = prediction:
coverage = |G∩P|/|G| (1.0 when G is empty), precision = |G∩P|/|P| (1.0 when P is empty),
F1 = 2·P·R/(P+R) (0 when both are 0; the scorer does not emit F1).

| level | gold | prediction | unit |
|---|---|---|---|
| file | gold paths, including files missing at the commit | resolved predicted files | files |
| symbol | definitions overlapping the gold byte spans, nested ones all count | predicted names
  matched against named definitions (exact, else the last dotted component; every same-named
  definition), else definitions overlapping the predicted byte spans | definitions
  ``(file, node type, start_byte, end_byte)`` |
| span | gold line spans as inclusive byte ranges of the file, merged | predicted spans, same |
  bytes |
| line | gold line intervals, merged | predicted line intervals (start, end > 0), merged | lines |

Intervals merge when they overlap or are adjacent; spans in files missing from the checkout add
no bytes and no symbols. Predicted paths resolve **by suffix** (strip a leading ``/`` or
``./``, then drop leading components until an existing file is found; unresolved paths are
dropped). Gold paths keep a leading dot (upstream's ``lstrip("./")`` turns ``.size-limit.js``
into ``size-limit.js``; we do not). A definition ``[start_byte, end_byte)`` overlaps an
inclusive byte span ``[s, e]`` when ``start_byte ≤ e`` and ``end_byte − 1 ≥ s``.

Trajectory: step t's context is the union of steps 1..t; AUC-coverage is the mean of the
per-step coverages; redundancy = 1 − |union of all steps| / Σ|step_t| (0 when the sum is 0);
without steps the final context is the single step. EditLoc: the ``-`` lines of the model patch
(old numbering); recall = precision = (removed lines inside gold line intervals) / (removed
lines), 0 when there are none; an empty patch is *not applicable* (upstream would fall back
to the gold patch).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from benchbook.datasets.gold import patch_lines
from benchbook.errors import InvalidInput
from benchbook.eval.checkout import Checkout, Interval

LEVELS = ("file", "symbol", "span", "line")
Unit = tuple[str, Any]
"""A member of a level's set: ``(file, item)``."""


def merge(intervals: Iterable[Interval]) -> list[Interval]:
    """Sorted inclusive intervals, merged when overlapping or adjacent."""
    out: list[Interval] = []
    for start, end in sorted(intervals):
        if out and start <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _size(intervals: Mapping[str, list[Interval]]) -> int:
    return sum(e - s + 1 for ivs in intervals.values() for s, e in ivs)


def _overlap(a: Mapping[str, list[Interval]], b: Mapping[str, list[Interval]]) -> int:
    total = 0
    for path, left in a.items():
        for s1, e1 in left:
            for s2, e2 in b.get(path, ()):
                total += max(0, min(e1, e2) - max(s1, s2) + 1)
    return total


@dataclass
class Context:
    """A localization (gold, a prediction, or one trajectory step), already resolved.

    Attributes:
        files: paths, in rank order for predictions (duplicates removed).
        lines: merged 1-based inclusive line intervals per file.
        symbols: definitions ``(file, (node type, start_byte, end_byte))``.
        spans: merged inclusive byte intervals per file.
    """

    files: list[str] = field(default_factory=list)
    lines: dict[str, list[Interval]] = field(default_factory=dict)
    symbols: set[Unit] = field(default_factory=set)
    spans: dict[str, list[Interval]] = field(default_factory=dict)

    def size(self, level: str) -> int:
        """|context| at ``level`` (files, definitions, bytes or lines)."""
        if level == "file":
            return len(set(self.files))
        if level == "symbol":
            return len(self.symbols)
        return _size(self.spans if level == "span" else self.lines)

    def common(self, other: Context, level: str) -> int:
        """|self ∩ other| at ``level``."""
        if level == "file":
            return len(set(self.files) & set(other.files))
        if level == "symbol":
            return len(self.symbols & other.symbols)
        if level == "span":
            return _overlap(self.spans, other.spans)
        return _overlap(self.lines, other.lines)


def union(contexts: Iterable[Context]) -> Context:
    """The union of ``contexts`` (files in first-seen order, intervals re-merged)."""
    files: dict[str, None] = {}
    lines: dict[str, list[Interval]] = {}
    spans: dict[str, list[Interval]] = {}
    symbols: set[Unit] = set()
    for c in contexts:
        files.update(dict.fromkeys(c.files))
        symbols |= c.symbols
        for target, source in ((lines, c.lines), (spans, c.spans)):
            for path, ivs in source.items():
                target.setdefault(path, []).extend(ivs)
    return Context(
        list(files),
        {p: merge(v) for p, v in lines.items()},
        symbols,
        {p: merge(v) for p, v in spans.items()},
    )


def _overlapping(checkout: Checkout, spans: Mapping[str, list[Interval]]) -> set[Unit]:
    found: set[Unit] = set()
    for path, ivs in spans.items():
        for d in checkout.definitions(path):
            if any(d.start_byte <= e and d.end_byte - 1 >= s for s, e in ivs):
                found.add((path, (d.kind, d.start_byte, d.end_byte)))
    return found


def _line_map(spans: Iterable[tuple[str, int, int]]) -> dict[str, list[Interval]]:
    """Merged line intervals per file; spans with a line ≤ 0 are dropped (upstream keeps
    ``start, end > 0`` only).

    Raises:
        InvalidInput: a span ends before it starts (``(210, 112)``): refused, naming the file
            and span, never swapped.
    """
    by_file: dict[str, list[Interval]] = {}
    for path, start, end in spans:
        if start > 0 and end > 0:
            if end < start:
                raise InvalidInput(
                    f"span ({start}, {end}) in {path} ends before it starts",
                    {"file": path, "start": start, "end": end},
                )
            by_file.setdefault(path, []).append((start, end))
    return {p: merge(v) for p, v in by_file.items()}


def _byte_map(checkout: Checkout, lines: Mapping[str, list[Interval]]) -> dict[str, list[Interval]]:
    out: dict[str, list[Interval]] = {}
    for path, ivs in lines.items():
        spans = [b for s, e in ivs if (b := checkout.byte_span(path, s, e)) is not None]
        if spans:
            out[path] = merge(spans)
    return out


def gold_context(spans: Iterable[Mapping[str, Any]], checkout: Checkout) -> Context:
    """The gold :class:`Context` of ``[{file, start_line, end_line}]`` (normalized paths)."""
    triples = [(str(s["file"]), int(s["start_line"]), int(s["end_line"])) for s in spans]
    lines = _line_map(triples)
    files = list(dict.fromkeys(t[0] for t in triples))
    byte_spans = _byte_map(checkout, lines)
    return Context(files, lines, _overlapping(checkout, byte_spans), byte_spans)


def _named(checkout: Checkout, symbols: Mapping[str, list[str]]) -> set[Unit]:
    found: set[Unit] = set()
    for path, names in symbols.items():
        defs = checkout.definitions(path)
        for raw in names:
            name = raw.strip()
            for candidate in (name, name.rsplit(".", 1)[-1]):
                matches = [d for d in defs if d.name and d.name == candidate]
                found |= {(path, (d.kind, d.start_byte, d.end_byte)) for d in matches}
                if matches:
                    break
    return found


def predicted_context(
    checkout: Checkout,
    files: Iterable[str] = (),
    spans: Mapping[str, Iterable[Mapping[str, Any]]] | None = None,
    symbols: Mapping[str, Iterable[str]] | None = None,
) -> Context:
    """A prediction (or one step) resolved against ``checkout``.

    Args:
        files: predicted paths in rank order (``pred_files``).
        spans: ``{path: [{start, end}]}`` 1-based inclusive lines (``pred_spans``).
        symbols: ``{path: [name]}`` (``pred_symbols``); when any is given, symbols come from
            the names, else from definitions overlapping the predicted byte spans.
    """
    resolved = [r for f in files if (r := checkout.resolve(str(f))) is not None]
    triples = []
    for path, items in (spans or {}).items():
        if (r := checkout.resolve(str(path))) is not None:
            triples += [(r, int(i.get("start", 0)), int(i.get("end", 0))) for i in items]
    lines = _line_map(triples)
    byte_spans = _byte_map(checkout, lines)
    named = {
        r: [str(n) for n in names]
        for path, names in (symbols or {}).items()
        if (r := checkout.resolve(str(path))) is not None
    }
    found = _named(checkout, named) if named else _overlapping(checkout, byte_spans)
    return Context(list(dict.fromkeys(resolved)), lines, found, byte_spans)


def ratios(common: int, gold: int, pred: int) -> dict[str, float]:
    """``{coverage, precision, f1}`` with the empty-set conventions of the module."""
    coverage = common / gold if gold else 1.0
    precision = common / pred if pred else 1.0
    f1 = 2 * coverage * precision / (coverage + precision) if coverage + precision else 0.0
    return {"coverage": coverage, "precision": precision, "f1": f1}


def level_scores(gold: Context, pred: Context) -> dict[str, dict[str, float]]:
    """Per level: ``{coverage, precision, f1, intersection, gold_size, pred_size}``."""
    out = {}
    for level in LEVELS:
        common, g, p = pred.common(gold, level), gold.size(level), pred.size(level)
        out[level] = {
            **ratios(common, g, p),
            "intersection": common,
            "gold_size": g,
            "pred_size": p,
        }
    return out


def trajectory(gold: Context, steps: list[Context], final: Context) -> dict[str, Any]:
    """``{num_steps, steps: [{step, coverage: {level}}], auc_coverage: {level},
    redundancy: {level}}``; no steps → ``final`` is the single step."""
    steps = steps or [final]
    per_step = []
    for t in range(1, len(steps) + 1):
        seen = union(steps[:t])
        per_step.append({lv: ratios(seen.common(gold, lv), gold.size(lv), 1)["coverage"]
                         for lv in LEVELS})  # fmt: skip
    everything = union(steps)
    redundancy = {}
    for lv in LEVELS:
        total = sum(s.size(lv) for s in steps)
        redundancy[lv] = 1 - everything.size(lv) / total if total else 0.0
    return {
        "num_steps": len(steps),
        "steps": [{"step": i + 1, "coverage": c} for i, c in enumerate(per_step)],
        "auc_coverage": {lv: sum(c[lv] for c in per_step) / len(per_step) for lv in LEVELS},
        "redundancy": redundancy,
    }


def editloc(model_patch: str, gold: Context) -> dict[str, float | int] | None:
    """EditLoc of ``model_patch`` against the gold line intervals; None (not applicable) for
    an empty patch. Raises InvalidInput when the patch is not a unified diff."""
    if not model_patch.strip():
        return None
    removed = [(fg.old_path, r) for fg in patch_lines(model_patch) for r in fg.removed]
    pred = sum(r.end - r.start + 1 for _, r in removed)
    inside = sum(
        _overlap({path: [(r.start, r.end)]}, {path: gold.lines.get(path, [])})
        for path, r in removed
    )
    value = inside / pred if pred else 0.0
    return {
        "recall": value,
        "precision": value,
        "intersection": inside,
        "gold_size": gold.size("line"),
        "pred_size": pred,
    }


def ranked(gold: Context, pred: Context, ks: Iterable[int] = (1, 3, 5, 10)) -> dict[str, float]:
    """``recall@k`` over the ranked predicted files and ``mrr`` (1/rank of the first gold
    file, 0 when none); recall@k is 1.0 when there is no gold file."""
    gold_files = set(gold.files)
    out = {
        f"recall@{k}": len(gold_files & set(pred.files[:k])) / len(gold_files)
        if gold_files
        else 1.0
        for k in ks
    }
    rank = next((i for i, f in enumerate(pred.files, start=1) if f in gold_files), None)
    out["mrr"] = 1.0 / rank if rank else 0.0
    return out


@dataclass(frozen=True)
class Prediction:
    """What a system localized for one instance (the upstream ``traj_data`` fields).

    Attributes:
        files: ranked predicted paths (``pred_files``).
        spans: ``{path: [{start, end}]}`` (``pred_spans``), 1-based inclusive lines.
        symbols: ``{path: [name]}`` (``pred_symbols``).
        steps: retrieval steps ``[{files, spans, symbols}]`` (``pred_steps``); may be empty.
        model_patch: the system's diff ("" when it made none).
    """

    files: list[str] = field(default_factory=list)
    spans: dict[str, list[dict[str, int]]] = field(default_factory=dict)
    symbols: dict[str, list[str]] = field(default_factory=dict)
    steps: list[dict[str, Any]] = field(default_factory=list)
    model_patch: str = ""


def score_instance(
    gold_spans: Iterable[Mapping[str, Any]], prediction: Prediction, checkout: Checkout
) -> dict[str, Any]:
    """Every metric of one instance, in the shape of the upstream ``--out`` row plus F1 and
    the ranked-file metrics: ``{num_steps, final: {level: {…}}, trajectory: {steps,
    auc_coverage, redundancy}, editloc: {…} | None, ranked: {recall@k…, mrr}}``.

    Raises:
        InvalidInput: ``model_patch`` is not a unified diff; the ``localization`` extra is
            missing for a code file.
    """
    gold = gold_context(gold_spans, checkout)
    final = predicted_context(checkout, prediction.files, prediction.spans, prediction.symbols)
    if not (final.files or final.lines or final.symbols):
        return no_context(prediction, checkout)
    steps = [
        predicted_context(checkout, s.get("files") or [], s.get("spans"), s.get("symbols"))
        for s in prediction.steps
    ]
    traj = trajectory(gold, steps, final)
    return {
        "num_steps": traj.pop("num_steps"),
        "final": level_scores(gold, final),
        "trajectory": traj,
        "editloc": editloc(prediction.model_patch, gold),
        "ranked": ranked(gold, final),
    }


def no_context(prediction: Prediction, checkout: Checkout) -> dict[str, Any]:
    """Upstream's error row for a final context with no file, span or symbol left after path
    resolution: ``{error: "no_context_extracted", reason, unresolved_paths}``."""
    named = [*prediction.files, *prediction.spans, *prediction.symbols]
    unresolved = sorted({str(p) for p in named if checkout.resolve(str(p)) is None})
    reason = (
        f"no predicted path is a file of the checkout ({', '.join(unresolved[:5])})"
        if unresolved
        else "the prediction names no file, span or symbol"
    )
    return {"error": "no_context_extracted", "reason": reason, "unresolved_paths": unresolved}


def aggregate(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Micro and macro aggregates over instance results (:func:`score_instance` rows, or
    ``{"error": reason}`` rows).

    Policy: ``scored`` excludes errored rows (as upstream does); ``all`` counts each errored
    row as coverage = precision = F1 = 0 in the macro means. Both views are returned:
    ``{instances, errored, micro: {level: {coverage, precision, f1}}, macro: {level: …},
    macro_all: {level: …}, auc_coverage: {level}, redundancy: {level}, editloc: {recall,
    precision, applicable}}``. Final metrics micro = Σ∩/ΣG and Σ∩/ΣP; AUC and redundancy
    macro; EditLoc micro over the rows where it applies, named as upstream's
    ``aggregate_results`` names them: recall = Σ∩/ΣG, precision = Σ∩/ΣP (1.0 on an empty
    denominator, upstream's ``coverage_precision``).
    """
    ok = [r for r in rows if "error" not in r]
    errored = len(rows) - len(ok)
    micro, macro, macro_all = {}, {}, {}
    for lv in LEVELS:
        finals = [r["final"][lv] for r in ok]
        micro[lv] = ratios(
            sum(f["intersection"] for f in finals),
            sum(f["gold_size"] for f in finals),
            sum(f["pred_size"] for f in finals),
        )
        macro[lv] = {m: _mean([f[m] for f in finals]) for m in ("coverage", "precision", "f1")}
        macro_all[lv] = {
            m: _mean([f[m] for f in finals] + [0.0] * errored)
            for m in ("coverage", "precision", "f1")
        }
    edits = [r["editloc"] for r in ok if r.get("editloc")]
    edit_ratios = ratios(
        sum(e["intersection"] for e in edits),
        sum(e["gold_size"] for e in edits),
        sum(e["pred_size"] for e in edits),
    )
    return {
        "instances": len(rows),
        "errored": errored,
        "micro": micro,
        "macro": macro,
        "macro_all": macro_all,
        "auc_coverage": {
            lv: _mean([r["trajectory"]["auc_coverage"][lv] for r in ok]) for lv in LEVELS
        },
        "redundancy": {lv: _mean([r["trajectory"]["redundancy"][lv] for r in ok]) for lv in LEVELS},
        "editloc": {
            "recall": edit_ratios["coverage"],
            "precision": edit_ratios["precision"],
            "applicable": len(edits),
        },
    }


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0
