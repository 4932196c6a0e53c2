"""lm-eval on Benchbook's export scores like lm-eval's own GSM8K task, and its samples import
as an ordinary run (issue 31), on SQLite and PostgreSQL.

lm-eval runs for real (``local-chat-completions``) against the local OpenAI-compatible server,
whose model reasons before answering with the last number of the question — the answers the
python harness ``tests.eval.harnesses.agents:last_number`` gives a native run.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from benchbook.contracts.run_imports import ImportLmEvalRequest
from benchbook.datasets.flat import write_export
from benchbook.errors import InvalidInput
from benchbook.services import comparisons, run_imports, runs, scorecards
from benchbook.services.context import Context
from benchbook.services.datasets import list_dataset_versions
from tests.conftest import import_or_need
from tests.openaiserver import OpenAIServer
from tests.services.interop_logs import lm_eval_output, reasoning_reply
from tests.services.test_run_imports import gsm8k, native_run, run_count

TASK = "benchbook_gsm8k_1_0_0"
LIMIT = 40


def test_the_exported_task_filters_answers_exactly_as_lm_evals_gsm8k(
    ctx: Context, shared_data: Path, tmp_path: Path
) -> None:
    lm_eval = import_or_need("lm_eval")
    cases = gsm8k(ctx, shared_data, 5)
    [version] = list_dataset_versions(ctx, "gsm8k")
    write_export(cases, tmp_path / "hf", "hf", version)
    ours = yaml.safe_load((tmp_path / "hf" / "lm_eval_task.yaml").read_text())
    own = Path(lm_eval.__file__).parent / "tasks" / "gsm8k" / "gsm8k.yaml"
    theirs = yaml.safe_load(own.read_text())
    assert ours["filter_list"] == theirs["filter_list"]
    assert ours["metric_list"] == theirs["metric_list"]
    assert ours["generation_kwargs"] == theirs["generation_kwargs"]
    assert ours["metadata"]["benchbook_dataset"] == "gsm8k@1.0.0"


@pytest.fixture
def lm_eval_run(
    ctx: Context, shared_data: Path, tmp_path: Path, openai_server: OpenAIServer
) -> tuple[Path, dict[str, object], str]:
    """GSM8K's first 40 rows, their export, lm-eval's output over them and a native run."""
    cases = gsm8k(ctx, shared_data, LIMIT)
    [version] = list_dataset_versions(ctx, "gsm8k")
    write_export(cases, tmp_path / "hf", "hf", version)
    openai_server.reply = reasoning_reply
    results = lm_eval_output(tmp_path / "hf", TASK, openai_server.url, tmp_path / "out", LIMIT)
    return tmp_path / "out", results, native_run(ctx, epochs=1)


def test_lm_eval_on_the_export_scores_like_benchbook_and_imports_as_a_run(
    ctx: Context, lm_eval_run: tuple[Path, dict[str, object], str]
) -> None:
    out, results, native = lm_eval_run
    reported = results["results"][TASK]  # type: ignore[index]
    native_card = scorecards.get_scorecard(ctx, runs.get_run(ctx, native).scorecard_id or "")
    assert native_card.pass_rate is not None and native_card.passed > 0
    # lm-eval's own GSM8K filters on the export: flexible-extract finds the reasoned answer
    # (as Benchbook's numeric grader does); strict-match wants '#### N' and finds none.
    assert reported["exact_match,flexible-extract"] == pytest.approx(native_card.pass_rate)
    assert reported["exact_match,strict-match"] == 0.0

    request = ImportLmEvalRequest(dataset="gsm8k@1.0.0", filter="flexible-extract")
    result = run_imports.import_lm_eval_run(ctx, request, out)
    assert (result.tool, result.samples, result.matched_by_id) == ("lm-eval", LIMIT, LIMIT)
    assert result.run.harness.startswith("lm-eval-benchbook_gsm8k_1_0_0-mock@")
    record = result.run.reproducibility["import"]
    assert isinstance(record, dict) and record["filter"] == "flexible-extract"
    assert record["tool_version"] == results["lm_eval_version"]
    assert isinstance(record["model_args"], dict) and record["model_args"]["model"] == "mock"
    card = result.imported_scorecard
    assert card.metrics["exact_match"].mean == pytest.approx(native_card.pass_rate)
    diff = comparisons.compare_scorecards(ctx, native, result.run.id)
    assert diff.comparable and diff.counts.fixed == diff.counts.regressed == 0
    assert diff.counts.missing_in_candidate == 0

    strict = run_imports.import_lm_eval_run(ctx, ImportLmEvalRequest(dataset="gsm8k@1.0.0"), out)
    assert strict.run.reproducibility["import"]["filter"] == "strict-match"  # type: ignore[index]
    assert strict.imported_scorecard.metrics["exact_match"].mean == 0.0

    before = run_count(ctx)
    with pytest.raises(InvalidInput, match="no filter 'majority'"):
        run_imports.import_lm_eval_run(ctx, request.model_copy(update={"filter": "majority"}), out)
    with pytest.raises(InvalidInput, match="no samples of task"):
        run_imports.import_lm_eval_run(ctx, request.model_copy(update={"task": "other"}), out)
    [samples] = list(out.rglob("samples_*.jsonl"))
    lines = samples.read_text().splitlines()
    samples.write_text("\n".join([*lines[:3], "{not json", *lines[3:]]) + "\n")
    with pytest.raises(InvalidInput, match="line 4: not JSON"):
        run_imports.import_lm_eval_run(ctx, request, out)
    assert run_count(ctx) == before
