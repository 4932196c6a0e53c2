"""Inspect AI logs imported as ordinary runs (issue 31), on SQLite and PostgreSQL.

The logs are real: Inspect's ``mockllm`` over the GSM8K export (tests/services/interop_logs.py).
The imported run's own scorecard (Benchbook's ``numeric`` grader) must equal a native run of a
python harness answering the same, with no transition in ``compare``; the imported scorecard
must equal Inspect's own reported accuracy.
"""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from benchbook.contracts.dataset import Case
from benchbook.contracts.run import StartRunRequest
from benchbook.contracts.run_imports import ImportInspectRequest
from benchbook.errors import ContentConflict, Forbidden, InvalidInput, NotFound
from benchbook.services import (
    accounts,
    comparisons,
    harnesses,
    imports,
    run_execution,
    run_imports,
    runs,
    scorecards,
)
from benchbook.services.context import Context, Principal, local_admin_context
from benchbook.services.datasets import get_dataset
from benchbook.services.runs import iter_cases
from benchbook.settings import Settings
from benchbook.store.engine import make_engine, migrate
from benchbook.store.tables import runs as runs_table
from tests.services.interop_logs import inspect_log

AGENT = {
    "id": "last-number",
    "version": "1.0.0",
    "kind": "python",
    "config": {"callable": "tests.eval.harnesses.agents:last_number"},
}


def gsm8k(ctx: Context, shared_data: Path, limit: int | None) -> list[Case]:
    """GSM8K's test split (its first ``limit`` rows) as gsm8k@1.0.0; its cases."""
    body: dict[str, object] = {"benchmark": "gsm8k"}
    if limit is not None:
        body["limit"] = limit
    imports.import_benchmark(
        ctx, imports.parse_import_request(body), shared_data / "gsm8k" / "test.jsonl"
    )
    view = get_dataset(ctx, "gsm8k", "1.0.0", limit=1)
    with ctx.engine.connect() as conn:
        from benchbook.services.resolve import resolve_version

        row = resolve_version(conn, ctx.workspace, "gsm8k", view.version.version)
        return [case for _, case in iter_cases(conn, row.pk)]


def native_run(ctx: Context, epochs: int) -> str:
    """The python harness answering like the mock model, run here; its run id."""
    harnesses.register_harness(ctx, harnesses.parse_harness(AGENT))
    request = StartRunRequest.model_validate(
        {"dataset": "gsm8k@1.0.0", "harness": "last-number@1.0.0", "settings": {"repeats": epochs}}
    )
    run = run_execution.execute_run(ctx, runs.start_run(ctx, request).id)
    assert run.status == "finished"
    return run.id


def run_count(ctx: Context) -> int:
    with ctx.engine.connect() as conn:
        return int(conn.scalar(select(func.count()).select_from(runs_table)) or 0)


def check_import(ctx: Context, log_path: Path, log: object, epochs: int, native: str) -> None:
    """The imported run against Inspect's numbers and the native run."""
    result = run_imports.import_inspect_run(
        ctx, ImportInspectRequest(dataset="gsm8k@1.0.0"), log_path, log_path.name
    )
    n = result.samples
    assert result.matched_by_id == n and result.unmatched == []
    run = result.run
    assert run.status == "finished" and run.counts.total == n
    assert (run.origin, run.reported_by) == ("imported", ctx.principal.user_id)  # issue 27
    assert run.harness == "inspect-gsm8k-mockllm-model@" + str(result.tool_version)
    record = run.reproducibility["import"]
    assert isinstance(record, dict)
    assert (record["tool"], record["task"], record["model"]) == (
        "inspect",
        "gsm8k",
        "mockllm/model",
    )
    inspect_accuracy = log.results.scores[0].metrics["accuracy"].value  # type: ignore[attr-defined]
    card = result.imported_scorecard
    assert card.metrics["match"].mean == pytest.approx(inspect_accuracy)
    assert card.pass_rate == pytest.approx(inspect_accuracy)
    assert card.plan.graders[0].id == "inspect" and card.rescore_of == run.scorecard_id
    assert card.repeats == epochs
    diff = comparisons.compare_scorecards(ctx, native, run.id)
    assert diff.comparable, diff.reasons
    assert diff.counts.fixed == diff.counts.regressed == 0
    assert diff.counts.missing_in_candidate == diff.counts.new_in_candidate == 0
    own = scorecards.get_scorecard(ctx, run.scorecard_id or "")
    native_card = scorecards.get_scorecard(ctx, runs.get_run(ctx, native).scorecard_id or "")
    assert (own.n, own.passed) == (native_card.n, native_card.passed)
    assert own.passed > 0  # GSM8K row 4 ends with its answer
    # An imported run is an ordinary run: listed, rescored, tagged.
    assert run.id in [r.id for r in runs.list_runs(ctx)]
    again = scorecards.rescore_run(ctx, run.id, [scorecards_numeric()])
    assert again.passed == own.passed
    tagged = scorecards.set_scorecard_tags(ctx, run.scorecard_id or "", ["inspect-import"])
    assert tagged.tags == ["inspect-import"]


def scorecards_numeric() -> object:
    from benchbook.contracts.dataset import GraderSpec

    return GraderSpec(id="numeric")


def test_an_inspect_log_imports_as_a_run_scored_like_inspect_and_like_a_native_run(
    ctx: Context, shared_data: Path, tmp_path: Path
) -> None:
    cases = gsm8k(ctx, shared_data, 30)
    native = native_run(ctx, epochs=2)
    log_path, log = inspect_log(cases, tmp_path / "logs", "gsm8k@1.0.0", epochs=2)
    check_import(ctx, log_path, log, 2, native)


def test_a_json_log_imports_like_an_eval_log(
    ctx: Context, shared_data: Path, tmp_path: Path
) -> None:
    cases = gsm8k(ctx, shared_data, 8)
    native = native_run(ctx, epochs=1)
    log_path, log = inspect_log(cases, tmp_path / "logs", "gsm8k@1.0.0", log_format="json")
    assert log_path.suffix == ".json"
    check_import(ctx, log_path, log, 1, native)


@pytest.fixture(scope="module")
def whole_gsm8k_log(
    shared_data: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, Any]:
    """Inspect over the whole GSM8K export, 2 epochs (2,638 samples), once for both backends:
    Inspect's eval took 33 s alone on the 2-core machine, 79 s at load 6, 163-229 s at load 13;
    the import and its checks 12-13 s a backend at load 6 (30 s SQLite, 54 s PostgreSQL at 13)."""
    home = tmp_path_factory.mktemp("whole")
    engine = make_engine(f"sqlite:///{home / 'b.db'}")
    migrate(engine)
    try:
        cases = gsm8k(local_admin_context(engine, Settings(home=home)), shared_data, None)
    finally:
        engine.dispose()
    assert len(cases) == 1319
    return inspect_log(cases, home / "logs", "gsm8k@1.0.0", epochs=2)


@pytest.mark.slow
def test_the_whole_gsm8k_export_with_two_epochs_imports(
    ctx: Context, shared_data: Path, whole_gsm8k_log: tuple[Path, Any]
) -> None:
    assert len(gsm8k(ctx, shared_data, None)) == 1319
    native = native_run(ctx, epochs=2)
    log_path, log = whole_gsm8k_log
    check_import(ctx, log_path, log, 2, native)


def test_samples_are_matched_by_input_text_when_their_ids_are_not_case_ids(
    ctx: Context, shared_data: Path, tmp_path: Path
) -> None:
    cases = gsm8k(ctx, shared_data, 6)
    renamed = [c.model_copy(update={"id": f"q{i}"}) for i, c in enumerate(cases)]
    log_path, _ = inspect_log(renamed, tmp_path / "logs", "my-questions")
    result = run_imports.import_inspect_run(
        ctx, ImportInspectRequest(dataset="gsm8k"), log_path, log_path.name
    )
    assert (result.matched_by_id, result.matched_by_input) == (0, 6)


def test_unmatched_samples_are_listed_and_nothing_is_registered_unless_allowed(
    ctx: Context, shared_data: Path, tmp_path: Path
) -> None:
    cases = gsm8k(ctx, shared_data, 4)
    stranger = cases[0].model_copy(update={"id": "stranger", "task": "What is 2 + 40?"})
    log_path, _ = inspect_log([*cases, stranger], tmp_path / "logs", "mixed")
    request = ImportInspectRequest(dataset="gsm8k@1.0.0")
    with pytest.raises(InvalidInput) as err:
        run_imports.import_inspect_run(ctx, request, log_path, log_path.name)
    assert "stranger" in err.value.message and err.value.details["unmatched"] == ["stranger"]
    assert run_count(ctx) == 0
    allowed = request.model_copy(update={"allow_unmatched": True})
    result = run_imports.import_inspect_run(ctx, allowed, log_path, log_path.name)
    assert result.unmatched == ["stranger"] and result.run.counts.total == 4


def test_a_log_of_another_dataset_version_is_refused(
    ctx: Context, shared_data: Path, tmp_path: Path
) -> None:
    cases = gsm8k(ctx, shared_data, 3)
    log_path, _ = inspect_log(cases, tmp_path / "logs", "gsm8k@2.0.0")
    with pytest.raises(InvalidInput, match=r"gsm8k@2\.0\.0"):
        run_imports.import_inspect_run(
            ctx, ImportInspectRequest(dataset="gsm8k@1.0.0"), log_path, log_path.name
        )
    with pytest.raises(NotFound):
        run_imports.import_inspect_run(
            ctx, ImportInspectRequest(dataset="nope@1.0.0"), log_path, log_path.name
        )
    assert run_count(ctx) == 0


def test_truncated_oversized_and_bomb_logs_are_refused_before_reading(
    ctx: Context, shared_data: Path, tmp_path: Path
) -> None:
    cases = gsm8k(ctx, shared_data, 3)
    log_path, _ = inspect_log(cases, tmp_path / "logs", "gsm8k@1.0.0")
    request = ImportInspectRequest(dataset="gsm8k@1.0.0")
    data = log_path.read_bytes()
    cut = tmp_path / "cut.eval"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(InvalidInput, match="truncated or not a zip"):
        run_imports.import_inspect_run(ctx, request, cut, cut.name)
    huge = tmp_path / "huge.eval"
    with huge.open("wb") as fh:  # sparse: 2 GiB on paper, no block written
        fh.truncate(2 << 30)
    with pytest.raises(InvalidInput, match=r"is 2147483648 bytes"):
        run_imports.import_inspect_run(ctx, request, huge, huge.name)
    bomb = tmp_path / "bomb.eval"
    shutil.copyfile(log_path, bomb)
    with (
        zipfile.ZipFile(bomb, "a", compression=zipfile.ZIP_DEFLATED) as zf,
        zf.open("samples/zeros.json", "w") as entry,
    ):
        for _ in range(65):
            entry.write(bytes(1 << 20))  # 65 MiB of zeros, ~65 KiB compressed
    small = ctx.settings.model_copy(update={"max_document_bytes": 64 << 20})
    with pytest.raises(InvalidInput, match=r"samples/zeros\.json"):
        run_imports.import_inspect_run(
            Context(ctx.principal, ctx.engine, small), request, bomb, bomb.name
        )
    assert run_count(ctx) == 0


def test_a_viewer_cannot_import_and_another_workspace_does_not_see_the_dataset(
    ctx: Context, shared_data: Path, tmp_path: Path
) -> None:
    cases = gsm8k(ctx, shared_data, 2)
    log_path, _ = inspect_log(cases, tmp_path / "logs", "gsm8k@1.0.0")
    request = ImportInspectRequest(dataset="gsm8k@1.0.0")
    viewer = Context(Principal("v", "Viewer", "default", "viewer"), ctx.engine, ctx.settings)
    with pytest.raises(Forbidden):
        run_imports.import_inspect_run(viewer, request, log_path, log_path.name)
    accounts.create_workspace(ctx, "elsewhere")
    with pytest.raises(NotFound):
        run_imports.import_inspect_run(
            accounts.in_workspace(ctx, "elsewhere"), request, log_path, log_path.name
        )
    assert run_count(ctx) == 0


def test_two_samples_of_one_case_are_refused_by_name(
    ctx: Context, shared_data: Path, tmp_path: Path
) -> None:
    cases = gsm8k(ctx, shared_data, 3)
    twin = cases[1].model_copy(update={"id": "twin"})  # the same question under another id
    log_path, _ = inspect_log([*cases, twin], tmp_path / "logs", "gsm8k@1.0.0")
    with pytest.raises(ContentConflict, match="twin repeats gsm8k-1"):
        run_imports.import_inspect_run(
            ctx, ImportInspectRequest(dataset="gsm8k@1.0.0"), log_path, log_path.name
        )
    assert run_count(ctx) == 0
