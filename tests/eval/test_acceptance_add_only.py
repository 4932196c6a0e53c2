"""Issue 29 acceptance: on SWE-bench Lite's add-only rows a harness answering an unrelated file
scores 0 (it scored 1.0 while gold for an insertion was file-level only).

The 300 real test rows of ``../shared/data/swebench/swe-bench-lite-test.json`` go through the
``localization`` grader with their gold ``patch``. The repositories themselves are not in the
shared data, so each row's base checkout is a directory holding, for every file the patch
changes, the lines the patch shows of it (context and removed lines at their base line
numbers, blank lines elsewhere) and one unrelated file, which is the harness's whole answer.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from benchbook.contracts.dataset import Case, GraderSpec
from benchbook.contracts.run import Trace
from benchbook.datasets.gold import parse_patch
from benchbook.eval.grading import Grading, Submission, grade_submission

UNRELATED = "unrelated/notes.py"


def base_checkout(patch: str, root: Path) -> None:
    """Write the base lines ``patch`` shows of each changed file under ``root``."""
    for pf in parse_patch(patch):
        if pf.is_added_file:
            continue
        lines: dict[int, str] = {}
        for hunk in pf:
            for ln in hunk:
                if ln.source_line_no:
                    lines[ln.source_line_no] = ln.value
        last = max(lines, default=0)
        text = "".join(lines.get(i, "\n") for i in range(1, last + 1))
        target = root / pf.source_file.removeprefix("a/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    (root / UNRELATED).parent.mkdir(parents=True, exist_ok=True)
    (root / UNRELATED).write_text("def helper():\n    return 1\n")


def case_of(row: dict[str, Any]) -> Case:
    git = f"https://github.com/{row['repo']}.git"
    return Case(
        id=row["instance_id"],
        env={"kind": "repo", "source": {"git": git, "ref": row["base_commit"]}},
        task=row["problem_statement"],
        metadata={"patch": row["patch"]},
        gold_fields=["patch"],
    )


def test_an_unrelated_file_scores_zero_on_every_add_only_swe_bench_lite_row(
    shared_data: Path, tmp_path: Path
) -> None:
    rows = json.loads((shared_data / "swebench" / "swe-bench-lite-test.json").read_text())
    assert len(rows) == 300
    add_only = [r for r in rows if not any(ln.is_removed for pf in parse_patch(r["patch"])
                                            for h in pf for ln in h)]  # fmt: skip
    assert len(add_only) == 77
    values = {}
    for row in add_only:
        root = tmp_path / row["instance_id"]
        base_checkout(row["patch"], root)
        trace = Trace(answer=UNRELATED + "\n")
        submission = Submission(answer=trace.answer, trace=trace, workdir=root)
        (score,) = asyncio.run(
            grade_submission([GraderSpec(id="localization")], submission, case_of(row), Grading())
        )
        assert score.status == "ok", (row["instance_id"], score.detail)
        assert score.detail["final"]["line"]["gold_size"] > 0, row["instance_id"]
        values[row["instance_id"]] = score.value
    assert values == dict.fromkeys(values, 0.0)
