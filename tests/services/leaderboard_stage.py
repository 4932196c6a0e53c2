"""A dataset with reported runs of several harnesses at known pass rates and costs, for the
leaderboard's service, HTTP and browser tests (``report_run``: no harness executes)."""

from __future__ import annotations

from dataclasses import dataclass

from benchbook.contracts.run import ReportedResult, ReportRunRequest, Run, Trace, Usage
from benchbook.services import datasets as ds
from benchbook.services import run_reports
from benchbook.services.context import Context
from tests.eval.test_runs import arithmetic

N = 10


@dataclass(frozen=True)
class Entry:
    """A harness@version that answers ``right`` of the N cases at ``cost`` USD per case."""

    harness: str
    right: int
    cost: float
    repeats: int = 1


# cheap (40%, $0.001) · mid (70%, $0.01) · dominated (60%, $0.02) · best (90%, $0.1)
ENTRIES = (
    Entry("cheap@1.0.0", 4, 0.001),
    Entry("mid@1.0.0", 7, 0.01),
    Entry("dominated@2.0.0", 6, 0.02),
    Entry("best@1.0.0", 9, 0.1),
)
FRONTIER = ("cheap@1.0.0", "mid@1.0.0", "best@1.0.0")


def report(ctx: Context, dataset: str, entry: Entry) -> Run:
    """Report ``entry``'s answers to ``dataset`` (``arithmetic`` cases c0..c9): the first
    ``right`` cases right, the rest wrong; every sample with ``cost`` and 1,500 input tokens."""
    results = []
    for sample in range(entry.repeats):
        for i in range(N):
            answer = str(i + 1) if i < entry.right else "-1"
            trace = Trace(
                usage=Usage(input_tokens=1500, output_tokens=20),
                cost_usd=entry.cost,
                duration_ms=100 * (i + 1),
            )
            results.append(
                ReportedResult(case_id=f"c{i}", sample=sample, answer=answer, trace=trace)
            )
    request = ReportRunRequest(dataset=dataset, harness=entry.harness, results=results)
    return run_reports.report_run(ctx, request)


def stage(ctx: Context, dataset_id: str = "board") -> dict[str, Run]:
    """``dataset_id``@1.0.0 with one reported run per entry; ``{harness: run}``."""
    ds.register_dataset(ctx, arithmetic(dataset_id, n=N))
    return {e.harness: report(ctx, dataset_id, e) for e in ENTRIES}
