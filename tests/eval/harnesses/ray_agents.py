"""Python harnesses for the Ray executor tests: they say where they ran.

Each answers ``a+b`` tasks like :func:`tests.eval.harnesses.agents.add` (wrong on cases whose
id ends in 7, failing on ids ending in 1, so a scorecard has all three outcomes) and notes the
Ray node and process it ran in as a trace event.
"""

from __future__ import annotations

import inspect
import os
import re
import time

from benchbook.contracts.run import CaseInput, HarnessOutput


def where() -> str:
    """``node <ray node id> pid <pid>`` (``node local`` outside a Ray worker)."""
    try:
        import ray

        node = ray.get_runtime_context().get_node_id() if ray.is_initialized() else "local"
    except ImportError:
        node = "local"
    return f"node {node} pid {os.getpid()}"


def add_noting_node(case: CaseInput) -> HarnessOutput:
    """Right on most cases, wrong on ids ending in 7, raises on ids ending in 1."""
    if case.case_id.endswith("1"):
        raise ValueError(f"cannot do {case.case_id}")
    a, b = map(int, re.findall(r"-?\d+", case.task)[:2])
    answer = str(a + b + (1 if case.case_id.endswith("7") else 0))
    return HarnessOutput(answer=answer, events=[{"type": "note", "text": where()}])


def slow_add_noting_node(case: CaseInput) -> HarnessOutput:
    """:func:`add_noting_node` after 50 ms (so a run lasts long enough to lose a node)."""
    time.sleep(0.05)
    return add_noting_node(case)


async def secrets_in_task(case: CaseInput) -> HarnessOutput:
    """Finds the Ray task's own arguments on the call stack and answers with the secret names
    the task received (``secrets:`` then the names, comma-separated, sorted): the view from
    inside the task. Async: a coroutine runs on the task's own thread, under ``run_case``."""
    import orjson

    names: list[str] = []
    for frame_info in inspect.stack():
        if frame_info.function == "run_case" and "shared" in frame_info.frame.f_locals:
            shared = orjson.loads(frame_info.frame.f_locals["shared"])
            names = sorted(shared["secrets"])
            break
    else:
        return HarnessOutput(answer="no ray task on the stack")
    return HarnessOutput(
        answer="secrets:" + ",".join(names), events=[{"type": "note", "text": where()}]
    )


def write_answer_file(case: CaseInput) -> str:
    """Writes ``a+b`` to ``answer.txt`` in its workspace (for a ``command`` grader) and
    answers ``see answer.txt``."""
    from benchbook.runtime.harnesses.python import current_workspace

    a, b = map(int, re.findall(r"-?\d+", case.task)[:2])
    (current_workspace().workdir / "answer.txt").write_text(f"{a + b}\n")
    return "see answer.txt"


async def meet_then_tell_cpus(case: CaseInput) -> HarnessOutput:
    """Task ``meet DIR N [SECONDS]``: leaves a file in DIR and waits (asyncio, IO-bound) until
    N cases have left theirs, then answers with the CPUs Ray reserved for its task; ``alone``
    when the others did not all come within SECONDS (default 120; they never can when Ray runs
    fewer than N such tasks at once). Any other task: just the CPUs."""
    import asyncio
    from pathlib import Path

    import ray

    cpus = ray.get_runtime_context().get_assigned_resources().get("CPU", 0.0)
    if case.task.startswith("meet "):
        _, folder, count, *wait = case.task.split()
        Path(folder).mkdir(exist_ok=True)
        (Path(folder) / case.case_id).touch()
        deadline = time.monotonic() + float(wait[0] if wait else 120)
        while len(list(Path(folder).iterdir())) < int(count):
            if time.monotonic() > deadline:
                return HarnessOutput(answer="alone")
            await asyncio.sleep(0.05)
    return HarnessOutput(answer=f"{cpus:g}", events=[{"type": "note", "text": where()}])


LOOPS: list[object] = []  # every event loop loop_count ran in (kept: ids are never reused)


async def loop_count(case: CaseInput) -> str:
    """How many distinct event loops this function has run in, in this process."""
    import asyncio

    LOOPS.append(asyncio.get_running_loop())
    return str(len({id(loop) for loop in LOOPS}))
