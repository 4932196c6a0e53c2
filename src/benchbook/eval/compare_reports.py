"""A comparison as text, Markdown (a pull-request comment) or JUnit XML (SPEC H.7, CI).

Pure functions of a :class:`~benchbook.contracts.comparison.Comparison` and, when a gate was
applied, its :class:`~benchbook.contracts.comparison.GateResult`. JUnit XML follows the
de-facto schema read by GitHub, GitLab and Jenkins (``testsuites/testsuite/testcase`` with
``failure`` and ``error`` children; Apache Ant's ``junitreport`` format).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from benchbook import numbers
from benchbook.contracts.comparison import TRANSITIONS, Comparison, Delta, GateResult
from benchbook.eval.compare import MAX_LISTED

MAX_IDS = 100
"""Case ids listed per transition in the Markdown report (the rest are counted)."""


def _pct(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "n/a"
    return f"{value:+.2%}" if signed else f"{value:.2%}"


def _num(value: float | None, signed: bool = False, name: str = "") -> str:
    """A value of the quantity ``name`` as people read it (:mod:`benchbook.numbers`): costs
    in dollars with their significant digits, token counts as integers, ``n/a`` for None."""
    if value is None:
        return "n/a"
    if name.endswith("_usd"):
        return numbers.usd(value, signed)
    if name.startswith("tokens") or name == "errors":
        return numbers.tokens(value, signed)
    return numbers.number(value, signed)


def _delta_line(delta: Delta, name: str = "") -> str:
    b, c = _num(delta.baseline, name=name), _num(delta.candidate, name=name)
    return f"{b} → {c} ({_num(delta.delta, True, name)})"


def _interval(c: Comparison) -> str:
    i = c.delta_interval
    if i is None:
        return "no paired cases" if not c.paired else "no pass rate on both sides"
    return (
        f"95% paired bootstrap [{_pct(i.low, True)}, {_pct(i.high, True)}] "
        f"({i.resamples:,} resamples, seed {i.seed})"
    )


def _mcnemar(c: Comparison) -> str:
    m = c.mcnemar
    verdict = "significant" if c.significant else "not significant"
    return (
        f"McNemar exact p = {m.p_value:.3g} ({m.fixed:,} fixed / {m.regressed:,} regressed): "
        f"{verdict} at α = {c.alpha}"
    )


def _points(value: float) -> str:
    """A pass-rate difference in percentage points, signed with a true minus: ``−3.1``."""
    return f"{value * 100:+.1f}".replace("-", "\u2212")


def verdict_line(c: Comparison) -> str:
    """The one-line verdict: ``−3.1 points, 95% CI [−5.0, −1.2], McNemar p = 0.002:
    significant drop`` (``no paired cases`` when nothing pairs, ``no pass rate on both sides``
    when a side's graders only measure). Significance is McNemar's
    exact test at ``c.alpha``; the interval is the paired bootstrap's."""
    delta = c.pass_rate_delta
    if delta is None:
        if c.paired:
            return "no pass rate on both sides (a side's graders only measure): nothing to compare"
        return "no paired cases: nothing to compare"
    i = c.delta_interval
    interval = f", 95% CI [{_points(i.low)}, {_points(i.high)}]" if i is not None else ""
    if not c.significant:
        verdict = "no significant change"
    else:
        verdict = "significant drop" if delta < 0 else "significant gain"
    return f"{_points(delta)} points{interval}, McNemar p = {c.mcnemar.p_value:.2g}: {verdict}"


def _ids(c: Comparison, transition: str, limit: int) -> list[str]:
    return [f"{t.case_id}#{t.sample}" for t in c.cases if t.transition == transition][:limit]


def _counts(c: Comparison) -> str:
    return ", ".join(f"{getattr(c.counts, t):,} {t.replace('_', ' ')}" for t in TRANSITIONS)


def render_text(c: Comparison, verdict: GateResult | None = None) -> str:
    """Plain text, one fact a line; regressed ids listed (at most 200)."""
    lines = [
        f"baseline {c.baseline} ({c.baseline_harness}, {c.baseline_dataset}) vs candidate "
        f"{c.candidate} ({c.candidate_harness}, {c.candidate_dataset})",
        "comparable" if c.comparable else f"NOT COMPARABLE: {'; '.join(c.reasons)}",
        *(f"NOTE: {note}" for note in c.notes),
        f"{c.paired:,} paired: {_counts(c)}",
        f"pass rate {_pct(c.baseline_pass_rate)} → {_pct(c.candidate_pass_rate)} "
        f"({_pct(c.pass_rate_delta, True)}), {_interval(c)}",
        _mcnemar(c),
    ]
    lines += [f"{name}: {_delta_line(d)}" for name, d in c.metrics.items()]
    for name in ("cost_usd", "tokens_input", "tokens_output", "latency_p50_ms", "latency_p95_ms"):
        lines.append(f"{name}: {_delta_line(getattr(c, name), name)}")
    lines.append(f"errors: {_delta_line(c.errors)}")
    regressed = _ids(c, "regressed", MAX_LISTED)
    if regressed and verdict is None:  # a gate lists them in its failures
        more = c.counts.regressed - len(regressed)
        lines.append("regressed: " + ", ".join(regressed) + (f" … and {more} more" if more else ""))
    if verdict is not None:
        lines.append(_gate_line(verdict))
        lines += [f"  - {f}" for f in verdict.failures]
    return "\n".join(lines) + "\n"


def _gate_line(verdict: GateResult) -> str:
    state = "passed" if verdict.passed else "FAILED"
    return f"gate --fail-on {verdict.fail_on}: {state} (exit {verdict.exit_code})"


def _md(text: str) -> str:
    """Text safe inside a Markdown table cell or list item."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;").replace("`", "'")


def render_markdown(c: Comparison, verdict: GateResult | None = None) -> str:
    """GitHub-flavoured Markdown for a pull-request comment: a verdict line, a summary table,
    metric deltas and collapsed lists of the changed case ids (at most 100 each)."""
    head = "### Benchbook compare"
    if verdict is not None:
        head += " — " + ("✅ passed" if verdict.passed else "❌ " + _gate_line(verdict))
    out = [head, ""]
    if not c.comparable:
        out += [f"> **Not comparable:** {_md('; '.join(c.reasons))}", ""]
    out += [item for note in c.notes for item in (f"> **Note:** {_md(note)}", "")]
    out += [
        "| | baseline | candidate | delta |",
        "|---|---|---|---|",
        f"| scorecard | `{c.baseline}` | `{c.candidate}` | |",
        f"| harness | {_md(c.baseline_harness)} | {_md(c.candidate_harness)} | |",
        f"| dataset | {_md(c.baseline_dataset)} | {_md(c.candidate_dataset)} | |",
        f"| pass rate ({c.paired:,} paired) | {_pct(c.baseline_pass_rate)} "
        f"| {_pct(c.candidate_pass_rate)} | **{_pct(c.pass_rate_delta, True)}** |",
    ]
    for name, d in c.metrics.items():
        out.append(
            f"| {_md(name)} | {_num(d.baseline)} | {_num(d.candidate)} | {_num(d.delta, True)} |"
        )
    for name in ("cost_usd", "tokens_input", "tokens_output", "latency_p50_ms", "errors"):
        d = getattr(c, name)
        out.append(
            f"| {name} | {_num(d.baseline, name=name)} | {_num(d.candidate, name=name)} "
            f"| {_num(d.delta, True, name)} |"
        )
    out += ["", f"{_interval(c)}; {_mcnemar(c)}.", "", f"Transitions: {_counts(c)}.", ""]
    if verdict is not None and verdict.failures:
        out += [f"- {_md(f)}" for f in verdict.failures] + [""]
    for transition in ("regressed", "fixed", "missing_in_candidate", "new_in_candidate"):
        total = getattr(c.counts, transition)
        if total:
            ids = ", ".join(f"`{_md(i)}`" for i in _ids(c, transition, MAX_IDS))
            more = f" … and {total - MAX_IDS:,} more" if total > MAX_IDS else ""
            label = transition.replace("_", " ")
            out += [
                f"<details><summary>{total:,} {label}</summary>",
                "",
                ids + more,
                "",
                "</details>",
                "",
            ]
    return "\n".join(out)


def render_junit(c: Comparison, allow_errors: bool = False) -> str:
    """JUnit XML: one ``testcase`` per (case, sample) named ``case_id#sample``; a ``failure``
    for each regressed or missing pair, an ``error`` for a pair the candidate errored on
    (unless ``allow_errors``); the transition in ``system-out``."""
    suites = ET.Element("testsuites", name="benchbook compare")
    suite = ET.SubElement(suites, "testsuite", name=f"{c.candidate_dataset} {c.candidate}")
    failures = errors = 0
    for t in c.cases:
        case = ET.SubElement(
            suite, "testcase", classname=c.candidate_dataset, name=f"{t.case_id}#{t.sample}"
        )
        detail = f"{t.transition}: baseline {t.baseline}, candidate {t.candidate}"
        if t.transition in ("regressed", "missing_in_candidate"):
            ET.SubElement(case, "failure", message=t.transition, type=t.transition).text = detail
            failures += 1
        elif t.candidate == "error" and not allow_errors:
            ET.SubElement(case, "error", message="candidate errored", type="error").text = detail
            errors += 1
        ET.SubElement(case, "system-out").text = detail
    counts = {"tests": str(len(c.cases)), "failures": str(failures), "errors": str(errors)}
    suite.attrib.update(counts)
    suites.attrib.update(counts)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"
