"""Measured run operations (``python -m bench.runs``). Each runs in its own child process
(``bench.child``) and returns a dict of numbers: ``seconds`` is wall-clock ``perf_counter``
time and ``cpu_s`` is ``time.process_time`` (every thread of the process) of the measured part
only; interpreter start, imports, migrations and dataset registration are excluded.
"""

from __future__ import annotations

import asyncio
import cProfile
import io
import pstats
import time
from collections.abc import Callable, Iterator
from typing import Any

from bench.tasks import _context

PYTHON_HARNESS = "bench-constant"
COMMAND_HARNESS = "bench-echo"


def constant(case_input: Any) -> str:
    """The python harness under measurement: always ``42`` (no work of its own)."""
    return "42"


def _prompt_rows(n: int) -> Iterator[tuple[str, bytes, str]]:
    """``(id, canonical body, sha256)`` of ``n`` cases "What is i+1?" → ``str(i+1)``."""
    from benchbook.contracts import Case
    from benchbook.contracts.dataset import PromptEnv
    from benchbook.datasets.identity import case_body, sha256_hex

    for i in range(n):
        case = Case(id=str(i), env=PromptEnv(), task=f"What is {i}+1?", expected=str(i + 1))
        body = case_body(case)
        yield case.id, body, sha256_hex(body)


def register(url: str, dataset_id: str, n: int) -> dict[str, Any]:
    """Register ``dataset_id@1.0.0`` with ``n`` prompt cases (timed) and both harnesses."""
    from benchbook.contracts.harness import CommandHarness, PythonHarness
    from benchbook.services.datasets import store_version
    from benchbook.services.harnesses import register_harness

    ctx = _context(url)
    meta: dict[str, Any] = {"id": dataset_id, "version": "1.0.0", "description": None}
    meta.update(tags=[], produced_by=None)
    t0 = time.perf_counter()
    r = store_version(ctx, dataset_id, "1.0.0", meta, _prompt_rows(n))
    secs = time.perf_counter() - t0
    harnesses: list[CommandHarness | PythonHarness] = [
        PythonHarness.model_validate(
            {
                "id": PYTHON_HARNESS,
                "version": "1.0.0",
                "kind": "python",
                "config": {"callable": "bench.run_tasks:constant"},
            }
        ),
        CommandHarness.model_validate(
            {
                "id": COMMAND_HARNESS,
                "version": "1.0.0",
                "kind": "command",
                "config": {"argv": ["/bin/echo", "{task}"]},
            }
        ),
    ]
    for h in harnesses:
        register_harness(ctx, h)
    return {"rows": r.cases, "seconds": secs}


def _profiled(fn: Any, profile: bool) -> tuple[Any, str | None]:
    if not profile:
        return fn(), None
    prof = cProfile.Profile()
    out = prof.runcall(fn)
    buf = io.StringIO()
    stats = pstats.Stats(prof, stream=buf)
    stats.sort_stats("tottime").print_stats(15)
    buf.write("\n--- by cumulative time ---\n")
    stats.sort_stats("cumulative").print_stats(30)
    return out, buf.getvalue()


def run(
    url: str,
    dataset_id: str,
    harness: str,
    concurrency: int,
    limit: int | None,
    profile: bool = False,
) -> dict[str, Any]:
    """``start_run`` + ``execute_run`` with the ``numeric`` grader: the whole run as a user
    starts it (planning, execution, writes, scorecard)."""
    from benchbook.contracts.dataset import GraderSpec
    from benchbook.contracts.run import RunSettings, StartRunRequest
    from benchbook.services.run_execution import execute_run
    from benchbook.services.runs import start_run

    ctx = _context(url)
    request = StartRunRequest(
        dataset=dataset_id,
        harness=harness,
        graders=[GraderSpec(id="numeric")],
        settings=RunSettings(concurrency=concurrency, limit=limit),
    )

    def go() -> Any:
        planned = start_run(ctx, request)
        return planned, execute_run(ctx, planned.id)

    c0, t0 = time.process_time(), time.perf_counter()
    (_planned, done), report = _profiled(go, profile)
    secs, cpu = time.perf_counter() - t0, time.process_time() - c0
    c = done.counts
    return {
        "cases": c.done,
        "total": c.total,
        "errors": c.error,
        "passed": c.passed,
        "status": done.status,
        "run_id": done.id,
        "seconds": secs,
        "cpu_s": cpu,
        "profile": report,
    }


class _DiscardSink:
    """A result sink that writes nothing (the executor's own cost, no database)."""

    def __init__(self) -> None:
        self.n = 0

    def write(self, items: list[Any]) -> None:
        self.n += len(items)

    def cancelled(self) -> bool:
        return False

    def heartbeat(self) -> None:
        return None


def executor_only(
    url: str, dataset_id: str, harness: str, concurrency: int, limit: int | None
) -> dict[str, Any]:
    """The same executor loop (``eval.executors.local.execute``: environment, harness, pricing,
    ``numeric`` grading) over the same cases read from the same database, with a sink that
    discards the results: no run row, no result writes, no scorecard."""
    from benchbook.contracts.dataset import GraderSpec
    from benchbook.eval.executors.local import Execution, WorkItem, execute
    from benchbook.eval.pricing import load_pricing
    from benchbook.services.harnesses import get_harness
    from benchbook.services.resolve import resolve_version
    from benchbook.services.run_execution import runtime_config
    from benchbook.services.runs import iter_cases

    ctx = _context(url)
    h = get_harness(ctx, harness)
    pricing, _ = load_pricing(None)
    with ctx.engine.connect() as conn:
        pk = resolve_version(conn, ctx.workspace, dataset_id, "latest").pk
    ex = Execution(
        harness=h,
        graders=[GraderSpec(id="numeric")],
        runtime=runtime_config(ctx.settings),
        secrets={},
        pricing=pricing,
        concurrency=concurrency,
    )
    sink = _DiscardSink()

    def items() -> Iterator[WorkItem]:
        with ctx.engine.connect() as conn:
            for position, case in iter_cases(conn, pk):
                if limit is not None and position >= limit:
                    return
                yield WorkItem(case, 0, position)

    c0, t0 = time.process_time(), time.perf_counter()
    outcome = asyncio.run(execute(items(), ex, sink))
    secs, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"cases": sink.n, "status": outcome, "seconds": secs, "cpu_s": cpu}


def echo_spawn(n: int, concurrency: int) -> dict[str, Any]:
    """Spawn ``/bin/echo`` ``n`` times with asyncio subprocesses, ``concurrency`` at once,
    reading stdout: the process-spawn floor of a ``command`` harness."""

    async def main() -> int:
        slots = asyncio.Semaphore(concurrency)

        async def one(i: int) -> None:
            async with slots:
                proc = await asyncio.create_subprocess_exec(
                    "/bin/echo",
                    f"What is {i}+1?",
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                )
                await proc.communicate()

        await asyncio.gather(*(one(i) for i in range(n)))
        return n

    c0, t0 = time.process_time(), time.perf_counter()
    cases = asyncio.run(main())
    secs, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"cases": cases, "seconds": secs, "cpu_s": cpu}


TASKS: dict[str, Callable[..., dict[str, Any]]] = {
    "runs.register": register,
    "runs.run": run,
    "runs.executor_only": executor_only,
    "runs.echo": echo_spawn,
}
