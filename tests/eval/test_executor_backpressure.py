"""Results never pile up unwritten: while the writer lags (a slow commit on a loaded machine),
no new case starts, so a kill -9 loses at most ``3 × concurrency + 1`` finished results — the
bound ``test_acceptance_resume`` relies on (it once saw 93 lost at concurrency 8 under load)."""

from __future__ import annotations

import time
from pathlib import Path

from benchbook.eval.executors.local import Execution, FinishedItem, WorkItem, execute
from benchbook.eval.pricing import load_pricing
from benchbook.eval.sync import run_sync
from benchbook.runtime import RuntimeConfig
from benchbook.services import harnesses
from tests.eval.harnesses import agents
from tests.eval.test_runs import arithmetic

CONCURRENCY = 4


class SlowSink:
    """A sink whose every write takes 50 ms; it records, at each write, how many harness
    calls had been made beyond what was already written."""

    def __init__(self) -> None:
        self.written = 0
        self.unwritten_at_write: list[int] = []

    def write(self, items: list[FinishedItem]) -> None:
        self.unwritten_at_write.append(agents.CALLS[0] - self.written)
        time.sleep(0.05)
        self.written += len(items)

    def cancelled(self) -> bool:
        return False

    def heartbeat(self) -> None:
        pass


def test_a_lagging_writer_holds_new_cases_back(tmp_path: Path) -> None:
    harness = harnesses.parse_harness(
        {
            "id": "counted",
            "version": "1.0.0",
            "kind": "python",
            "config": {"callable": "tests.eval.harnesses.agents:counted"},
        }
    )
    ex = Execution(
        harness=harness,
        graders=[],
        runtime=RuntimeConfig(work_root=tmp_path / "work", mirrors=tmp_path / "mirrors"),
        secrets={},
        pricing=load_pricing(None)[0],
        concurrency=CONCURRENCY,
    )
    cases = arithmetic(n=120).cases
    sink = SlowSink()
    agents.CALLS[0] = 0
    assert run_sync(execute([WorkItem(c, 0, i) for i, c in enumerate(cases)], ex, sink)) == (
        "finished"
    )
    assert sink.written == len(cases) == agents.CALLS[0]
    # each write found at most: the batch it commits (≤ queue + 1), the queue refilled behind
    # it (≤ concurrency) and the cases in flight (≤ concurrency)
    assert max(sink.unwritten_at_write) <= 3 * CONCURRENCY + 1, sink.unwritten_at_write
