"""``benchbook compare`` and ``benchbook runs tag|cases`` through CliRunner (SPEC H.7, issue 11
items 2, 3 and 5): exit codes, the text/JSON/Markdown outputs, JUnit XML, baselines by tag and
promotion, on both backends."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import orjson

from tests.cli.conftest import invoke
from tests.eval.test_runs import arithmetic


def _register(cli_env: dict[str, str], tmp_path: Path, function: str) -> None:
    harness = tmp_path / f"{function}.json"
    body = {
        "id": function.replace("_", "-"),
        "version": "1.0.0",
        "kind": "python",
        "config": {"callable": f"tests.eval.harnesses.agents:{function}"},
    }
    harness.write_bytes(orjson.dumps(body))
    result = invoke(cli_env, "harnesses", "register", str(harness))
    assert result.exit_code == 0, result.output


def _run(cli_env: dict[str, str], harness: str, dataset: str = "sums") -> dict[str, str]:
    result = invoke(cli_env, "run", dataset, "--harness", harness, "--json")
    assert result.exit_code == 0, result.output
    run: dict[str, str] = orjson.loads(result.stdout)
    return run


def _setup(cli_env: dict[str, str], tmp_path: Path) -> tuple[dict[str, str], dict[str, str]]:
    """sums@1.0.0 (5 cases); ``explode`` (c1 errors) and ``add`` (all right) runs."""
    for dataset in (arithmetic(n=5), arithmetic("other", n=5)):
        path = tmp_path / f"{dataset.id}.json"
        path.write_bytes(orjson.dumps(dataset.model_dump(mode="json")))
        assert invoke(cli_env, "register", str(path)).exit_code == 0
    _register(cli_env, tmp_path, "explode")
    _register(cli_env, tmp_path, "add")
    return _run(cli_env, "explode"), _run(cli_env, "add")


def test_compare_exits_by_the_gate_and_promotes_only_a_passing_candidate(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    broken, good = _setup(cli_env, tmp_path)
    fixed = invoke(cli_env, "compare", broken["id"], good["id"], "--fail-on", "regression")
    assert fixed.exit_code == 0, fixed.output
    assert "5 paired: 1 fixed, 0 regressed, 4 still passing" in " ".join(fixed.stdout.split())
    assert "gate --fail-on regression: passed (exit 0)" in fixed.stdout
    back = invoke(cli_env, "compare", good["id"], broken["id"], "--fail-on", "regression")
    assert back.exit_code == 1
    assert "  - 1 regressed: c1#0" in back.stdout
    assert "  - 1 errored in candidate (--allow-errors to accept): c1#0" in back.stdout
    allowed = invoke(
        cli_env, "compare", good["id"], broken["id"], "--fail-on", "regression", "--allow-errors"
    )
    assert allowed.exit_code == 1 and "errored in candidate" not in allowed.stdout
    report = invoke(cli_env, "compare", good["id"], broken["id"])  # no gate: a report
    assert report.exit_code == 0 and "regressed: c1#0" in report.stdout

    tagged = invoke(cli_env, "runs", "tag", broken["id"], "baseline")
    assert tagged.exit_code == 0 and "tags: baseline" in tagged.stdout
    promoted = invoke(
        cli_env, "compare", "--baseline", "baseline", good["id"], "--fail-on", "regression",
        "--promote", "baseline",
    )  # fmt: skip
    assert promoted.exit_code == 0 and f"promoted: {good['scorecard_id']}" in promoted.stderr
    # the baseline moved to the good run; the broken one is never promoted over it
    refused = invoke(
        cli_env, "compare", "--baseline", "baseline", broken["id"], "--fail-on", "regression",
        "--promote", "baseline",
    )  # fmt: skip
    assert refused.exit_code == 1 and "not promoted" in refused.stderr
    shown = orjson.loads(invoke(cli_env, "runs", "scorecard", good["scorecard_id"]).stdout)
    assert shown["tags"] == ["baseline"]
    old = orjson.loads(invoke(cli_env, "runs", "scorecard", broken["scorecard_id"]).stdout)
    assert old["tags"] == []


def test_bad_compare_input_exits_2_with_a_clear_error(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    broken, good = _setup(cli_env, tmp_path)
    other = _run(cli_env, "add", "other")
    mixed = invoke(cli_env, "compare", broken["id"], other["id"])
    assert mixed.exit_code == 2
    assert "compare scorecards of the same dataset" in " ".join(mixed.stderr.split())
    unknown = invoke(cli_env, "compare", "sc_0000000000000000", good["id"])
    assert unknown.exit_code == 2
    assert "error not_found: scorecard 'sc_0000000000000000' not found" in unknown.stderr
    as_candidate = invoke(cli_env, "compare", good["id"], "baseline")
    assert as_candidate.exit_code == 2
    assert (
        "error not_found: scorecard 'baseline' not found (the candidate must be a scorecard or"
        " run id; only the baseline may be a tag)" in " ".join(as_candidate.stderr.split())
    )
    untagged = invoke(cli_env, "compare", "--baseline", "prod", good["id"], "--format", "json")
    assert untagged.exit_code == 2 and orjson.loads(untagged.stdout)["code"] == "not_found"
    assert invoke(cli_env, "compare", good["id"]).exit_code == 2  # BASE missing
    promote = invoke(cli_env, "compare", broken["id"], good["id"], "--promote", "x")
    assert promote.exit_code == 2 and "--promote needs --fail-on" in promote.stderr
    bad_tag = invoke(cli_env, "runs", "tag", good["id"], "1.0.0")
    assert bad_tag.exit_code == 1 and "SemVer" in bad_tag.stderr


def test_runs_cases_pages_results_like_runs_results(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    broken, _ = _setup(cli_env, tmp_path)
    cases = invoke(cli_env, "runs", "cases", broken["id"], "--json", "--limit", "2")
    assert cases.exit_code == 0, cases.output
    assert [r["case_id"] for r in orjson.loads(cases.stdout)] == ["c0", "c1"]
    listed = invoke(cli_env, "runs", "results", broken["id"], "--json", "--limit", "2")
    assert orjson.loads(listed.stdout) == orjson.loads(cases.stdout)


def test_markdown_and_junit_reports_of_a_regression(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    broken, good = _setup(cli_env, tmp_path)
    junit = tmp_path / "compare.xml"
    result = invoke(
        cli_env, "compare", good["id"], broken["id"], "--fail-on", "regression", "--allow-errors",
        "--format", "markdown", "--junit-xml", str(junit),
    )  # fmt: skip
    assert result.exit_code == 1
    md = result.stdout
    assert md.startswith("### Benchbook compare — ❌ gate --fail-on regression: FAILED (exit 1)")
    assert "| pass rate (5 paired) | 100.00% | 80.00% | **-20.00%** |" in md
    assert "<details><summary>1 regressed</summary>" in md and "`c1#0`" in md
    root = ET.parse(junit).getroot()
    assert root.tag == "testsuites" and root.attrib["tests"] == "5"
    cases = root.findall("./testsuite/testcase")
    assert [c.attrib["name"] for c in cases] == [f"c{i}#0" for i in range(5)]
    failed = [c.attrib["name"] for c in cases if c.find("failure") is not None]
    assert failed == ["c1#0"] and root.attrib["failures"] == "1"
    assert root.attrib["errors"] == "0"  # --allow-errors
