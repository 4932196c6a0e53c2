"""Python harnesses of the Ray executor benchmark (imported by the Ray workers too)."""

from __future__ import annotations

import asyncio

from benchbook.contracts.run import CaseInput


async def sleep_50ms(case: CaseInput) -> str:
    """Waits 50 ms (asyncio: the local executor keeps ``concurrency`` of them in flight)."""
    await asyncio.sleep(0.05)
    return "42"


def spin(case: CaseInput) -> str:
    """Pure-Python work: the task is ``spin N``; N loop steps (calibrated to ~100 ms)."""
    n = int(case.task.split()[1])
    total = 0
    for i in range(n):
        total += i * i % 7
    return str(total % 10)


def spin_steps(seconds: float = 0.1) -> int:
    """How many :func:`spin` steps take ``seconds`` of CPU here (best of three; CPU time, not
    wall time, so a loaded machine does not shrink the work)."""
    import time

    probe = 200_000
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        total = 0
        for i in range(probe):
            total += i * i % 7
        best = min(best, time.process_time() - started)
    return int(probe * seconds / best)


def raw_sleep_50ms() -> None:
    """The sleep case's work as a plain Ray task (the bench's raw-Ray baseline)."""
    import time

    time.sleep(0.05)


def raw_spin(n: int) -> int:
    """The spin case's work as a plain Ray task (the bench's raw-Ray baseline)."""
    total = 0
    for i in range(n):
        total += i * i % 7
    return total % 10
