"""The ``local`` executor (SPEC H.4): asyncio in this process, ``concurrency`` cases in flight.

For each work item (a case with its gold, a sample index and its dataset position) it builds
the harness's :class:`CaseInput` (gold left out), opens the case's environment, runs the
harness, prices the trace, grades the submission while the workspace still exists, and hands
the :class:`FinishedItem` to the sink. The sink writes batches from a thread, so the event loop
keeps harnesses moving while the database commits; whatever finished is flushed as soon as the
previous write returns, so a killed process loses at most the items in flight. The queue to
the writer holds at most ``concurrency`` items: while the writer lags (a slow commit on a loaded
machine), a finished case keeps its slot until its result is queued, so no new case starts and
a kill -9 loses at most ``3 × concurrency + 1`` results (in flight or waiting to be queued,
queued, and the batch being committed), however slow the database.

Budget: no new item starts once the spent cost reaches ``budget_usd``; the rest are reported
``not_run`` and the outcome is ``budget_exhausted``. Cancel: the sink's ``cancelled()`` is
checked before each new item starts; items in flight finish and are written.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from pydantic import JsonValue

from benchbook.contracts.dataset import Case, GraderSpec
from benchbook.contracts.harness import Harness
from benchbook.contracts.run import CaseResult, RuntimeResult, Trace, Usage
from benchbook.contracts.scorecard import PricingTable
from benchbook.eval.grading import (
    Grading,
    Submission,
    decide_passed,
    grade_submission,
    grader_error_of,
)
from benchbook.eval.inputs import case_input
from benchbook.eval.pricing import price_usd
from benchbook.runtime import RuntimeConfig, open_environment, run_harness

Outcome = Literal["finished", "cancelled", "budget_exhausted"]
HEARTBEAT_S = 5.0
#: How long the writer waits after a first result for others to join its batch (seconds).
BATCH_WAIT_S = 0.005


@dataclass(frozen=True)
class WorkItem:
    """One (case, sample) to run; ``position`` is the case's index in the dataset version."""

    case: Case
    sample: int
    position: int


@dataclass(frozen=True)
class FinishedItem:
    """A work item's result, ready to be written."""

    position: int
    result: CaseResult


class ResultSink(Protocol):
    """Where finished items go (the services layer writes them to the store)."""

    def write(self, items: list[FinishedItem]) -> None:
        """Persist a batch (called from a worker thread; one transaction)."""
        ...

    def cancelled(self) -> bool:
        """True once the run was asked to stop (checked before each new item; must be cheap —
        a flag refreshed by ``write`` and ``heartbeat``)."""
        ...

    def heartbeat(self) -> None:
        """Renew the run's lease (called every :data:`HEARTBEAT_S` seconds)."""
        ...


@dataclass
class Execution:
    """Everything the executor needs besides the work items.

    Attributes:
        harness: the harness under evaluation.
        graders: the run's plan graders (empty: each case's own graders).
        runtime: paths and programs of the runtime.
        secrets: secret values the harness and judges may name.
        pricing: the price table for ``trace.cost_usd``.
        grading: judge secrets, verdict cache and model-call counter.
        concurrency: items in flight (≥ 1).
        timeout_s: run-level per-case timeout (None: each case's own).
        budget_usd: the spend cap (None: unbounded); ``spent_usd`` what was spent before.
    """

    harness: Harness
    graders: list[GraderSpec]
    runtime: RuntimeConfig
    secrets: Mapping[str, str]
    pricing: PricingTable
    grading: Grading = field(default_factory=Grading)
    concurrency: int = 4
    timeout_s: int | None = None
    budget_usd: float | None = None
    spent_usd: float = 0.0


async def run_item(item: WorkItem, ex: Execution) -> CaseResult:
    """Run, price and grade one work item. Never raises: failures become an error result."""
    ci = case_input(item.case, item.sample, ex.timeout_s)
    try:
        async with open_environment(ci, ex.runtime) as workspace:
            outcome = await run_harness(ex.harness, ci, workspace, ex.secrets)
            return await grade_outcome(item, outcome, ex, workspace.workdir)
    except Exception as exc:  # our own failure is data too, never a crashed run
        return internal_error(item, exc)


async def grade_outcome(
    item: WorkItem, outcome: RuntimeResult, ex: Execution, workdir: Path | None
) -> CaseResult:
    """Price the trace of a finished harness and grade it (``workdir``: the case workspace
    while it still exists, else None — workspace graders are then ``skipped``).

    Raises:
        Exception: only Benchbook's own failures (graders' failures are scores).
    """
    trace = _priced(outcome.trace, ex.pricing)
    submission = Submission(
        trace.answer, trace, outcome.status, workdir, sandbox=ex.runtime.sandbox
    )
    specs = ex.graders or item.case.graders  # a run's plan replaces the case's own
    scores = await grade_submission(specs, submission, item.case, ex.grading)
    return CaseResult(
        case_id=item.case.id,
        sample=item.sample,
        status=outcome.status,
        error=outcome.error,
        answer=trace.answer,
        passed=decide_passed(outcome.status, scores),
        grader_error=grader_error_of(scores) if outcome.status == "ok" else None,
        scores=scores,
        cost_usd=trace.cost_usd,
        duration_ms=trace.duration_ms,
        trace=trace,
    )


def internal_error(item: WorkItem, exc: BaseException | str) -> CaseResult:
    """The error result of an item Benchbook itself failed on (an exception, or a reason)."""
    reason = exc if isinstance(exc, str) else f"internal: {type(exc).__name__}: {exc}"
    return CaseResult(
        case_id=item.case.id,
        sample=item.sample,
        status="error",
        error=reason,
        passed=False,
        trace=Trace(),
    )


def _priced(trace: Trace, pricing: PricingTable) -> Trace:
    """``trace`` with ``cost_usd`` from its usage and model, and each ``model_call`` event (an
    ``agent`` harness's step: ``input_tokens``, ``output_tokens``) priced as ``cost_usd``."""
    if trace.cost_usd is None and trace.model:
        cost = price_usd(pricing, trace.model, trace.usage)
        if cost is not None:
            events = [_priced_step(e, pricing, trace.model) for e in trace.events]
            return trace.model_copy(update={"cost_usd": cost, "events": events})
    return trace


def _priced_step(
    event: dict[str, JsonValue], pricing: PricingTable, model: str
) -> dict[str, JsonValue]:
    if event.get("type") != "model_call":
        return event
    tokens = (event.get("input_tokens"), event.get("output_tokens"))
    if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in tokens):
        return event
    usage = Usage(input_tokens=tokens[0], output_tokens=tokens[1])
    return {**event, "cost_usd": price_usd(pricing, model, usage)}


def not_run(item: WorkItem, reason: str) -> FinishedItem:
    """The record of an item that never started (budget reached)."""
    return FinishedItem(
        item.position,
        CaseResult(case_id=item.case.id, sample=item.sample, status="not_run", error=reason),
    )


async def execute(
    items: Iterable[WorkItem],
    ex: Execution,
    sink: ResultSink,
    on_flush: Callable[[list[FinishedItem]], Awaitable[None] | None] | None = None,
) -> Outcome:
    """Run every item (bounded by ``ex.concurrency``) and write results through ``sink``.

    Returns:
        ``finished``, ``cancelled`` (the sink said stop; unstarted items stay missing so a
        resume runs them) or ``budget_exhausted`` (unstarted items written as ``not_run``).
    """
    queue = result_queue(ex.concurrency)
    writer = asyncio.create_task(writer_loop(queue, sink, on_flush))
    beat = asyncio.create_task(heartbeat_loop(sink))
    slots = asyncio.Semaphore(ex.concurrency)
    spent = [ex.spent_usd]
    running: set[asyncio.Task[None]] = set()
    outcome: Outcome = "finished"

    async def one(item: WorkItem) -> None:
        try:
            result = await run_item(item, ex)
            spent[0] += result.cost_usd or 0.0
            await queue.put(FinishedItem(item.position, result))
        finally:
            slots.release()

    try:
        for item in items:
            await slots.acquire()
            outcome = admission(outcome, sink, ex, spent[0])
            if outcome == "cancelled":
                slots.release()
                break
            if outcome == "budget_exhausted":
                slots.release()
                await queue.put(not_run(item, "budget exhausted"))
                continue
            task = asyncio.create_task(one(item))
            running.add(task)
            task.add_done_callback(running.discard)
        if running:
            await asyncio.gather(*running)
    finally:
        await queue.put(None)
        await writer
        beat.cancel()
    return outcome


def result_queue(concurrency: int) -> asyncio.Queue[FinishedItem | None]:
    """The queue from the cases to the writer, bounded at ``concurrency`` items: a producer
    waits while the writer lags, so results never pile up in memory unwritten."""
    return asyncio.Queue(maxsize=max(1, concurrency))


def admission(outcome: Outcome, sink: ResultSink, ex: Execution, spent_usd: float) -> Outcome:
    """Whether the next item may start: ``finished`` (yes), ``cancelled`` (the sink says stop;
    stop submitting) or ``budget_exhausted`` (record it ``not_run``). Once not ``finished``,
    the outcome stays."""
    if outcome == "finished" and sink.cancelled():
        return "cancelled"
    if outcome == "finished" and ex.budget_usd is not None and spent_usd >= ex.budget_usd:
        return "budget_exhausted"
    return outcome


async def writer_loop(
    queue: asyncio.Queue[FinishedItem | None],
    sink: ResultSink,
    on_flush: Callable[[list[FinishedItem]], Awaitable[None] | None] | None,
) -> None:
    """Write what the queue brings in batches (one transaction each) until it brings None."""
    done = False
    while not done:
        batch: list[FinishedItem] = []
        first = await queue.get()
        if first is None:
            done = True
        else:
            batch.append(first)
            # A few milliseconds lets fast cases share one transaction (one commit for many);
            # slow cases lose nothing but this delay. A kill loses at most this window too.
            await asyncio.sleep(BATCH_WAIT_S)
        while not queue.empty() and len(batch) < 1000:
            nxt = queue.get_nowait()
            if nxt is None:
                done = True
                break
            batch.append(nxt)
        if batch:
            await asyncio.to_thread(sink.write, batch)
            if on_flush is not None:
                maybe = on_flush(batch)
                if maybe is not None:
                    await maybe


async def heartbeat_loop(sink: ResultSink) -> None:
    """Call ``sink.heartbeat`` every :data:`HEARTBEAT_S` seconds until cancelled."""
    last = time.monotonic()
    while True:
        await asyncio.sleep(1.0)
        if time.monotonic() - last >= HEARTBEAT_S:
            await asyncio.to_thread(sink.heartbeat)
            last = time.monotonic()
