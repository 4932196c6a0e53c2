"""The ``ray`` executor (SPEC H.4): each (case, sample) is a task on a Ray cluster.

The driver is this process (the CLI, or the worker inside ``benchbook serve``): it keeps
ownership of the run and of every write. For each work item it submits one Ray task
(:func:`benchbook.eval.executors.ray_task.run_case`) carrying only the item's
:class:`~benchbook.contracts.run.CaseInput` (gold left out), the harness spec and the values of
the secrets that harness names — put once per run in the object store and shared by every
task. The case's ``resources`` become the task's Ray resource request (``num_cpus`` =
millicores / 1000; ``memory`` = MB × 2²⁰ bytes; ``num_gpus``). A case that declares no
``cpu_millicores`` asks for ``num_cpus`` CPUs (:func:`task_cpus`: the run's ``ray_num_cpus``,
else the cluster's CPUs / ``concurrency``, at most 1), so a run of IO-bound cases (model calls,
sleeps) keeps ``concurrency`` of them running at once as the local executor does, instead of
one per CPU. The environment is provisioned on the worker that runs the task.

Results come back with ``ray.wait`` as tasks finish, in whatever order; the driver prices and
grades each one here (gold never leaves this process) and hands it to the same writer as the
local executor, so resume, budget, cancel and progress behave the same. At most
``concurrency`` tasks are submitted and unfinished, and at most ``concurrency`` results are
back but not yet queued for the writer, at a time; no new task is submitted once the
run is cancelled or the budget is reached. Workspace graders (``command``, ``tests-pass``)
need the workspace, which stayed on the worker: for them the driver prepares the case's
environment again and replays the worker's snapshot on it (:func:`grade_returned`).

A task whose worker process or node dies is resubmitted by Ray up to ``max_retries`` times
(Ray's own task retry); after that the item is recorded ``error`` with Ray's reason. Each item
is written exactly once: by the driver, when its task's result (or final failure) arrives. A
case whose resource request no node of the cluster can ever satisfy is recorded ``error``
without being submitted (Ray would otherwise keep it pending forever).
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
from collections.abc import Awaitable, Callable, Iterable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from benchbook.contracts.dataset import Resources
from benchbook.contracts.harness import secret_names
from benchbook.contracts.run import CaseResult, EnvSnapshot, RuntimeResult, Trace
from benchbook.errors import InvalidInput
from benchbook.eval.executors.local import (
    Execution,
    FinishedItem,
    Outcome,
    ResultSink,
    WorkItem,
    admission,
    grade_outcome,
    heartbeat_loop,
    internal_error,
    not_run,
    result_queue,
    writer_loop,
)
from benchbook.eval.executors.ray_task import run_case, shared_payload
from benchbook.eval.graders import WORKSPACE_GRADERS
from benchbook.eval.inputs import case_input
from benchbook.runtime import open_environment

INSTALL_HINT = "pip install 'benchbook[ray]'"
#: How long one ``ray.wait`` blocks before the driver checks cancel and heartbeats (seconds).
WAIT_S = 0.2
DEFAULT_MAX_RETRIES = 3


def ray_installed() -> bool:
    """Whether the ``ray`` package can be imported here (found, not imported)."""
    try:
        return importlib.util.find_spec("ray") is not None
    except (ImportError, ValueError):
        return False


def import_ray() -> ModuleType:
    """The ``ray`` module.

    Raises:
        InvalidInput: ray is not installed (the message says how to install the extra).
    """
    try:
        return importlib.import_module("ray")
    except ImportError as exc:
        raise InvalidInput(
            f"the ray executor needs the 'ray' extra, which is not installed: {INSTALL_HINT}",
            {"executor": "ray", "install": INSTALL_HINT},
        ) from exc


#: Ray's smallest unit of a fractional resource.
RAY_RESOURCE_UNIT = 0.0001


def task_cpus(num_cpus: float | None, concurrency: int, nodes: list[dict[str, float]]) -> float:
    """The CPUs a task asks for when its case declares none: ``num_cpus`` when given, else the
    live nodes' CPUs / ``concurrency`` (rounded down to Ray's 0.0001, at least that), at most
    1 — so ``concurrency`` tasks fit on the cluster at once.

    >>> task_cpus(None, 32, [{"CPU": 2.0}]), task_cpus(None, 3, [{"CPU": 2.0}])
    (0.0625, 0.6666)
    """
    if num_cpus is not None:
        return num_cpus
    total_units = round(sum(node.get("CPU", 0.0) for node in nodes) / RAY_RESOURCE_UNIT)
    units = max(1, total_units // concurrency)
    return min(1.0, round(units * RAY_RESOURCE_UNIT, 4))


def ray_options(resources: Resources | None, default_cpus: float = 1.0) -> dict[str, float]:
    """A case's resources as Ray task options: ``num_cpus`` (millicores / 1000, else
    ``default_cpus``), ``memory`` (bytes, from MB) and ``num_gpus``."""
    options: dict[str, float] = {"num_cpus": default_cpus}
    if resources is None:
        return options
    if resources.cpu_millicores is not None:
        options["num_cpus"] = resources.cpu_millicores / 1000
    if resources.memory_mb is not None:
        options["memory"] = float(resources.memory_mb * 1024 * 1024)
    if resources.gpu:
        options["num_gpus"] = float(resources.gpu)
    return options


_RAY_KEYS = {"num_cpus": "CPU", "memory": "memory", "num_gpus": "GPU"}


def _unfittable(options: dict[str, float], nodes: list[dict[str, float]]) -> str | None:
    """Why no live node can ever run a task with ``options`` (None: some node can)."""
    for node in nodes:
        if all(node.get(_RAY_KEYS[k], 0.0) >= v for k, v in options.items()):
            return None
    wanted = ", ".join(f"{k}={v:g}" for k, v in options.items())
    return f"ray: no node of the cluster can satisfy the case's resources ({wanted})"


_connected: list[str] = []


def connect(ray: ModuleType, address: str) -> None:
    """``ray.init(address)`` once per process (re-initialised when the address changes).

    Raises:
        InvalidInput: the cluster cannot be reached (the address is named).
    """
    if ray.is_initialized() and _connected == [address]:
        return
    if ray.is_initialized():
        ray.shutdown()
    try:
        ray.init(address=address, log_to_driver=False, logging_level="WARNING")
    except Exception as exc:
        raise InvalidInput(
            f"settings.ray_address: cannot connect to the Ray cluster at {address!r}: {exc}",
            {"ray_address": address},
        ) from exc
    _connected[:] = [address]


def _live_node_resources(ray: ModuleType) -> list[dict[str, float]]:
    return [dict(n.get("Resources", {})) for n in ray.nodes() if n.get("Alive")]


async def execute_ray(
    items: Iterable[WorkItem],
    ex: Execution,
    sink: ResultSink,
    address: str = "auto",
    max_retries: int = DEFAULT_MAX_RETRIES,
    num_cpus: float | None = None,
    on_flush: Callable[[list[FinishedItem]], Awaitable[None] | None] | None = None,
) -> Outcome:
    """Run every item as a Ray task on the cluster at ``address`` and write results through
    ``sink`` as they arrive (same contract as :func:`benchbook.eval.executors.local.execute`).

    Args:
        address: ``auto`` (the cluster this machine belongs to), ``ray://host:port`` (Ray
            Client) or ``host:port`` (the head's GCS address).
        max_retries: how often Ray resubmits a task whose worker or node died (≥ 0).
        num_cpus: the CPUs of a task whose case declares no ``cpu_millicores`` (None: the
            cluster's CPUs / ``ex.concurrency``, at most 1; see :func:`task_cpus`).

    Returns:
        ``finished``, ``cancelled`` or ``budget_exhausted``.

    Raises:
        InvalidInput: ray is not installed, or the cluster cannot be reached.
    """
    ray = import_ray()
    connect(ray, address)  # in this thread: ray.init wants the main thread when it is one
    nodes = await asyncio.to_thread(_live_node_resources, ray)
    default_cpus = task_cpus(num_cpus, ex.concurrency, nodes)
    names = secret_names(ex.harness)
    secrets = {n: ex.secrets[n] for n in names if n in ex.secrets}
    shared = await asyncio.to_thread(ray.put, shared_payload(ex.harness, secrets, ex.runtime))
    remote = ray.remote(run_case)
    variants: dict[tuple[tuple[str, float], ...], Any] = {}
    queue = result_queue(ex.concurrency)
    writer = asyncio.create_task(writer_loop(queue, sink, on_flush))
    beat = asyncio.create_task(heartbeat_loop(sink))
    spent = [ex.spent_usd]
    pending: dict[Any, WorkItem] = {}
    grading: set[asyncio.Task[None]] = set()
    outcome: Outcome = "finished"
    source: Iterator[WorkItem] = iter(items)
    exhausted = False

    async def finish(item: WorkItem, returned: RuntimeResult) -> None:
        try:
            result = await grade_returned(item, returned, ex)
        except Exception as exc:
            result = internal_error(item, exc)
        spent[0] += result.cost_usd or 0.0
        await queue.put(FinishedItem(item.position, result))

    async def submit() -> None:
        nonlocal exhausted, outcome
        while not exhausted and len(pending) < ex.concurrency:
            # At most ``concurrency`` results being graded or waiting for the writer's queue:
            # while the writer lags, no new task starts.
            while len(grading) >= ex.concurrency:
                await asyncio.wait(set(grading), return_when=asyncio.FIRST_COMPLETED)
            item = next(source, None)
            if item is None:
                exhausted = True
                return
            outcome = admission(outcome, sink, ex, spent[0])
            if outcome == "cancelled":
                exhausted = True
                return
            if outcome == "budget_exhausted":
                await queue.put(not_run(item, "budget exhausted"))
                continue
            options = ray_options(item.case.resources, default_cpus)
            reason = _unfittable(options, nodes)
            if reason is not None:
                await queue.put(FinishedItem(item.position, internal_error(item, reason)))
                continue
            ci = case_input(item.case, item.sample, ex.timeout_s).model_dump_json().encode()
            key = tuple(sorted(options.items()))
            if key not in variants:  # one options wrapper per distinct resource request
                variants[key] = remote.options(
                    max_retries=max_retries, retry_exceptions=False, **options
                )
            ref = variants[key].remote(shared, ci)
            pending[ref] = item

    try:
        await submit()
        while pending:
            for ref, returned in await asyncio.to_thread(_collect, ray, list(pending), max_retries):
                task = asyncio.create_task(finish(pending.pop(ref), returned))
                grading.add(task)
                task.add_done_callback(grading.discard)
            await submit()
        if grading:
            await asyncio.gather(*grading)
    finally:
        await queue.put(None)
        await writer
        beat.cancel()
    return outcome


async def grade_returned(item: WorkItem, outcome: RuntimeResult, ex: Execution) -> CaseResult:
    """Grade a result that came back from a worker. When the plan has a workspace grader
    (``command``, ``tests-pass``), the case's environment is prepared again here and the
    worker's snapshot replayed on it (a repo's diff applied with ``git apply``, a prompt's
    output files written), so those graders see what the harness left.

    Raises:
        RuntimeError: the snapshot cannot be replayed (the diff does not apply).
    """
    specs = ex.graders or item.case.graders
    if outcome.status != "ok" or not any(s.id in WORKSPACE_GRADERS for s in specs):
        return await grade_outcome(item, outcome, ex, None)
    ci = case_input(item.case, item.sample, ex.timeout_s)
    async with open_environment(ci, ex.runtime) as workspace:
        if workspace.error is not None:
            raise RuntimeError(f"cannot prepare the workspace to grade in: {workspace.error}")
        await _replay(outcome.trace.env_snapshot, workspace.workdir)
        return await grade_outcome(item, outcome, ex, workspace.workdir)


async def _replay(snapshot: EnvSnapshot, workdir: Path) -> None:
    """Put a worker's snapshot on a fresh copy of the environment."""
    root = workdir.resolve()
    for name, text in (snapshot.output or {}).items():
        target = (root / name).resolve()
        if not target.is_relative_to(root):
            raise RuntimeError(f"snapshot file {name!r} is outside the workspace")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    if snapshot.diff:
        proc = await asyncio.create_subprocess_exec(
            "git", "apply", "--binary", "--whitespace=nowarn", "-",
            cwd=workdir, stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        _, err = await proc.communicate(snapshot.diff.encode())
        if proc.returncode != 0:
            raise RuntimeError(f"the worker's diff does not apply here: {err.decode()[-300:]}")


def _collect(ray: ModuleType, refs: list[Any], max_retries: int) -> list[tuple[Any, RuntimeResult]]:
    """The tasks among ``refs`` that finished (``ray.wait``: at least one, or none after
    :data:`WAIT_S`), each with its result — fetched here too, so the event loop's thread
    never blocks on Ray."""
    ready, rest = ray.wait(refs, num_returns=1, timeout=WAIT_S)
    if ready and rest:
        more, _ = ray.wait(rest, num_returns=len(rest), timeout=0)
        ready += more
    try:
        raws: list[bytes] = ray.get(ready)  # one round trip for all of them
    except ray.exceptions.RayError:
        return [(ref, _result_of(ray, ref, max_retries)) for ref in ready]
    return [
        (ref, RuntimeResult.model_validate_json(raw)) for ref, raw in zip(ready, raws, strict=True)
    ]


def _result_of(ray: ModuleType, ref: Any, max_retries: int) -> RuntimeResult:
    """The task's RuntimeResult, or an ``error`` one when Ray gave up on it."""
    try:
        raw: bytes = ray.get(ref)
    except ray.exceptions.RayError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return RuntimeResult(
            status="error",
            error=f"ray: {type(exc).__name__} after {max_retries} retries: {first}"[:500],
            trace=Trace(),
        )
    return RuntimeResult.model_validate_json(raw)
