"""Localization metrics (SPEC I, LOCALIZATION §4): hand-computed edges on a tiny checkout, and
symbol gold on the real bundled repositories."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchbook.datasets.contextbench import Selection, load_contextbench
from benchbook.errors import InvalidInput
from benchbook.eval.checkout import Checkout
from benchbook.eval.localization import (
    Prediction,
    aggregate,
    gold_context,
    score_instance,
)
from tests.repo_bundles import BundledRepo

# Line starts (bytes): 1→0, 2→9, 3→26, 4→43, 5→44, 6→53; 66 bytes in all.
A_PY = "class A:\n    def f(self):\n        return 1\n\ndef g():\n    return 2\n"


@pytest.fixture
def checkout(tmp_path: Path) -> Checkout:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text(A_PY)
    (tmp_path / ".size-limit.js").write_text("module.exports = [];\n")
    (tmp_path / "README.md").write_text("hello\n")
    return Checkout.from_dir(tmp_path)


def span(file: str, start: int, end: int) -> dict[str, Any]:
    return {"file": file, "start_line": start, "end_line": end}


def final(result: dict[str, Any], level: str) -> tuple[float, float, int, int, int]:
    f = result["final"][level]
    return f["coverage"], f["precision"], f["intersection"], f["gold_size"], f["pred_size"]


def test_lines_become_inclusive_byte_ranges(checkout: Checkout) -> None:
    assert checkout.byte_span("pkg/a.py", 2, 3) == (9, 42)
    assert checkout.byte_span("pkg/a.py", 6, 99) == (53, 65)  # clamped to the file
    assert checkout.byte_span("pkg/a.py", 7, 9) is None
    assert checkout.byte_span("gone.py", 1, 1) is None


def test_empty_gold_gives_full_coverage_and_zero_precision(checkout: Checkout) -> None:
    result = score_instance([], Prediction(files=["pkg/a.py"]), checkout)
    assert final(result, "file") == (1.0, 0.0, 0, 0, 1)
    assert result["final"]["file"]["f1"] == 0.0
    assert final(result, "line") == (1.0, 1.0, 0, 0, 0)


def test_an_empty_prediction_is_upstreams_no_context_extracted_row(checkout: Checkout) -> None:
    result = score_instance([span("pkg/a.py", 2, 3)], Prediction(), checkout)
    assert result == {
        "error": "no_context_extracted",
        "reason": "the prediction names no file, span or symbol",
        "unresolved_paths": [],
    }


def test_a_prediction_whose_every_path_is_outside_the_checkout_is_no_context_extracted(
    checkout: Checkout,
) -> None:
    prediction = Prediction(
        files=["nowhere/x.py"], spans={"elsewhere.py": [{"start": 1, "end": 2}]}
    )
    result = score_instance([span("pkg/a.py", 2, 3)], prediction, checkout)
    assert result["error"] == "no_context_extracted"
    assert result["unresolved_paths"] == ["elsewhere.py", "nowhere/x.py"]
    summary = aggregate(
        [result, score_instance([span("pkg/a.py", 2, 3)], Prediction(files=["pkg/a.py"]), checkout)]
    )
    assert (summary["instances"], summary["errored"]) == (2, 1)
    assert summary["micro"]["file"]["coverage"] == 1.0  # the error row is left out


def test_a_reversed_span_is_refused_naming_it_never_swapped(checkout: Checkout) -> None:
    prediction = Prediction(files=["pkg/a.py"], spans={"pkg/a.py": [{"start": 5, "end": 2}]})
    with pytest.raises(InvalidInput, match=r"span \(5, 2\) in pkg/a.py ends before it starts"):
        score_instance([span("pkg/a.py", 2, 3)], prediction, checkout)


def test_aggregate_editloc_names_recall_and_precision_as_upstream(checkout: Checkout) -> None:
    patch = "--- a/pkg/a.py\n+++ b/pkg/a.py\n@@ -3 +3 @@\n-        return 1\n+        return 3\n"
    rows = [
        score_instance(
            [span("pkg/a.py", 2, 5)], Prediction(files=["pkg/a.py"], model_patch=patch), checkout
        )
    ]
    assert rows[0]["editloc"]["intersection"] == 1 and rows[0]["editloc"]["gold_size"] == 4
    # upstream aggregate_results: coverage_precision(Σpred, Σgold, Σ∩) → recall Σ∩/ΣG
    assert aggregate(rows)["editloc"] == {"recall": 0.25, "precision": 1.0, "applicable": 1}


def test_adjacent_gold_spans_merge_before_counting(checkout: Checkout) -> None:
    gold = [span("pkg/a.py", 2, 3), span("pkg/a.py", 4, 5)]  # → lines 2-5, bytes 9-52
    result = score_instance(
        gold, Prediction(spans={"pkg/a.py": [{"start": 3, "end": 3}]}), checkout
    )
    assert final(result, "line") == (0.25, 1.0, 1, 4, 1)
    assert final(result, "span") == (17 / 44, 1.0, 17, 44, 17)


def test_nested_definitions_all_count_and_names_match_by_last_component(
    checkout: Checkout,
) -> None:
    gold = [span("pkg/a.py", 3, 3)]  # inside A.f, inside class A
    by_name = Prediction(files=["pkg/a.py"], symbols={"pkg/a.py": ["A.f"]})
    result = score_instance(gold, by_name, checkout)
    assert final(result, "symbol") == (0.5, 1.0, 1, 2, 1)
    by_span = Prediction(files=["pkg/a.py"], spans={"pkg/a.py": [{"start": 5, "end": 6}]})
    assert final(score_instance(gold, by_span, checkout), "symbol") == (0.0, 0.0, 0, 2, 1)


def test_a_gold_file_missing_at_the_commit_counts_for_files_and_lines_only(
    checkout: Checkout,
) -> None:
    gold = [span("pkg/a.py", 5, 6), span("run_test.js", 1, 10)]
    pred = Prediction(
        files=["pkg/a.py", "run_test.js"], spans={"pkg/a.py": [{"start": 5, "end": 6}]}
    )
    result = score_instance(gold, pred, checkout)
    assert final(result, "file") == (0.5, 1.0, 1, 2, 1)  # the missing file cannot be predicted
    assert final(result, "line") == (2 / 12, 1.0, 2, 12, 2)
    assert final(result, "span") == (1.0, 1.0, 22, 22, 22)
    assert final(result, "symbol") == (1.0, 1.0, 1, 1, 1)


def test_predicted_paths_resolve_by_suffix_and_unresolvable_ones_are_dropped(
    checkout: Checkout,
) -> None:
    pred = Prediction(files=["/workspace/owner__repo__0.1/pkg/a.py", "/elsewhere/nothing.py"])
    result = score_instance([span("pkg/a.py", 1, 1)], pred, checkout)
    assert final(result, "file") == (1.0, 1.0, 1, 1, 1)


def test_dotfiles_keep_their_leading_dot(checkout: Checkout) -> None:
    gold = [span(".size-limit.js", 1, 1)]
    result = score_instance(gold, Prediction(files=["./.size-limit.js"]), checkout)
    assert final(result, "file") == (1.0, 1.0, 1, 1, 1)
    assert final(result, "span") == (0.0, 1.0, 0, 21, 0)


def test_duplicate_predictions_count_once(checkout: Checkout) -> None:
    pred = Prediction(
        files=["pkg/a.py", "pkg/a.py", "./pkg/a.py"],
        spans={"pkg/a.py": [{"start": 2, "end": 3}, {"start": 2, "end": 3}]},
        symbols={"pkg/a.py": ["g", "g"]},
    )
    result = score_instance([span("pkg/a.py", 2, 3)], pred, checkout)
    assert final(result, "file") == (1.0, 1.0, 1, 1, 1)
    assert final(result, "line") == (1.0, 1.0, 2, 2, 2)
    assert final(result, "symbol") == (0.0, 0.0, 0, 2, 1)


def test_without_steps_the_final_context_is_the_single_step(checkout: Checkout) -> None:
    pred = Prediction(files=["pkg/a.py"], spans={"pkg/a.py": [{"start": 2, "end": 2}]})
    result = score_instance([span("pkg/a.py", 2, 3)], pred, checkout)
    assert result["num_steps"] == 1
    assert result["trajectory"]["auc_coverage"]["line"] == 0.5
    assert result["trajectory"]["redundancy"]["line"] == 0.0


def test_auc_coverage_and_redundancy_over_steps(checkout: Checkout) -> None:
    steps = [
        {"files": ["pkg/a.py"], "spans": {"pkg/a.py": [{"start": 2, "end": 3}]}},
        {"files": ["pkg/a.py"], "spans": {"pkg/a.py": [{"start": 3, "end": 4}]}},
    ]
    pred = Prediction(files=["pkg/a.py"], steps=steps)
    result = score_instance([span("pkg/a.py", 2, 5)], pred, checkout)
    trajectory = result["trajectory"]
    assert [s["coverage"]["line"] for s in trajectory["steps"]] == [0.5, 0.75]
    assert trajectory["auc_coverage"]["line"] == 0.625
    assert trajectory["redundancy"]["line"] == 0.25  # 1 - 3 distinct lines / 4 read
    assert trajectory["redundancy"]["file"] == 0.5
    assert result["final"]["line"]["pred_size"] == 0  # the final prediction had no spans


def test_editloc_counts_removed_lines_inside_gold_and_skips_an_empty_patch(
    checkout: Checkout,
) -> None:
    patch = (
        "--- a/pkg/a.py\n+++ b/pkg/a.py\n@@ -3 +3 @@\n-        return 1\n+        return 3\n"
        "@@ -6 +6 @@\n-    return 2\n+    return 4\n"
    )
    gold = [span("pkg/a.py", 2, 3)]
    edit = score_instance(gold, Prediction(["pkg/a.py"], model_patch=patch), checkout)["editloc"]
    assert (edit["recall"], edit["precision"], edit["intersection"], edit["pred_size"]) == (
        0.5,
        0.5,
        1,
        2,
    )
    assert (
        score_instance(gold, Prediction(["pkg/a.py"], model_patch=""), checkout)["editloc"] is None
    )
    adds_only = "--- a/pkg/a.py\n+++ b/pkg/a.py\n@@ -3,0 +4 @@\n+x = 1\n"
    assert score_instance(gold, Prediction(["pkg/a.py"], model_patch=adds_only), checkout)[
        "editloc"
    ]["recall"] == (0.0)


def test_recall_at_k_and_mrr_over_ranked_files(checkout: Checkout) -> None:
    gold = [span("pkg/a.py", 1, 1), span(".size-limit.js", 1, 1)]
    pred = Prediction(files=["README.md", "pkg/a.py", "nowhere.py", ".size-limit.js"])
    ranked = score_instance(gold, pred, checkout)["ranked"]
    # the unresolvable path is dropped before ranking: .size-limit.js ranks third
    assert ranked == {
        "recall@1": 0.0,
        "recall@3": 1.0,
        "recall@5": 1.0,
        "recall@10": 1.0,
        "mrr": 0.5,
    }
    pred = Prediction(files=["README.md", "pkg/a.py", "README.md", "nowhere.py"])
    ranked = score_instance(gold, pred, checkout)["ranked"]
    assert (ranked["recall@1"], ranked["recall@3"], ranked["mrr"]) == (0.0, 0.5, 0.5)


def test_micro_and_macro_aggregates_state_the_error_policy(checkout: Checkout) -> None:
    one = score_instance(
        [span("pkg/a.py", 1, 4)], Prediction(spans={"pkg/a.py": [{"start": 1, "end": 1}]}), checkout
    )
    two = score_instance(
        [span("pkg/a.py", 5, 6)], Prediction(spans={"pkg/a.py": [{"start": 5, "end": 6}]}), checkout
    )
    summary = aggregate([one, two, {"error": "checkout_failed"}])
    assert (summary["instances"], summary["errored"]) == (3, 1)
    assert summary["micro"]["line"]["coverage"] == 3 / 6  # (1 + 2) / (4 + 2)
    assert summary["macro"]["line"]["coverage"] == (0.25 + 1.0) / 2
    assert summary["macro_all"]["line"]["coverage"] == (0.25 + 1.0 + 0.0) / 3
    assert summary["micro"]["line"]["precision"] == 1.0
    assert summary["editloc"] == {"recall": 1.0, "precision": 1.0, "applicable": 0}


# One hand-checked definition per bundled row (language): (qualified name, lines) must be among
# the definitions overlapping the gold spans; the count is all such definitions.
BUNDLED = [
    ("pydata__xarray", "python", ("Weighted._sum_of_weights", 137, 150), 13),
    ("tokio-rs__tracing", "rust", ("gen_body", 488, 683), 1),
    ("clap-rs__clap", "rust", ("should_show_arg", 1090, 1098), 22),
    ("cli__cli", "go", ("runEnable", 58, 93), 17),
    ("facebook__zstd", "c", ("ZSTD_copyRawBlock", 459, 466), 1),
    ("jqlang__jq", "c", ("main", 275, 728), 9),
    ("fasterxml__jackson-core", "java", ("JsonFactory.rebuild", 431, 435), 97),
    ("vuejs__core", "typescript", ("markRaw", 387, 390), 14),
]


@pytest.fixture(scope="module")
def contextbench_by_commit(shared_data: Path) -> dict[str, dict[str, Any]]:
    release = shared_data / "contextbench" / "contextbench_verified_test.parquet"
    rows, _ = load_contextbench(release, Selection())
    return {r["base_commit"]: r for r in rows}


@pytest.mark.parametrize(
    ("name", "language", "expected", "count"), BUNDLED, ids=[b[0] for b in BUNDLED]
)
def test_symbol_gold_on_the_bundled_repositories(
    name: str,
    language: str,
    expected: tuple[str, int, int],
    count: int,
    bundled_repo: BundledRepo,
    contextbench_by_commit: dict[str, dict[str, Any]],
) -> None:
    repo, sha = bundled_repo(name)
    row = contextbench_by_commit[sha]
    assert row["language"] == language
    checkout = Checkout.from_git(repo, sha)
    gold = gold_context(row["gold_context"], checkout)
    named = set()
    for path, (kind, start, end) in gold.symbols:
        (d,) = [
            d
            for d in checkout.definitions(path)
            if (d.kind, d.start_byte, d.end_byte) == (kind, start, end)
        ]
        named.add((d.qualified, d.start_line, d.end_line))
    assert expected in named
    assert len(gold.symbols) == count
    spans = {}
    for s in row["gold_context"]:
        spans.setdefault(s["file"], []).append({"start": s["start_line"], "end": s["end_line"]})
    perfect = score_instance(
        row["gold_context"], Prediction(files=list(spans), spans=spans), checkout
    )
    assert all(perfect["final"][lv]["coverage"] == 1.0 for lv in ("file", "symbol", "span", "line"))
