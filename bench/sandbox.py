"""Sandbox cost: ``.venv/bin/python -m bench.sandbox [--cases N] [--rounds R]``.

Per-case start overhead of a sandboxed ``/bin/true`` command harness against the unsandboxed
one (issue 27, target ≤ 5 ms added per case), measured in the same process and run:

- **case, sandbox off / on**: a prompt case run end to end through the runtime
  (``open_environment`` + ``run_harness``, as the local executor does) with a ``command``
  harness ``["/bin/true"]``, one case at a time, with ``SandboxPolicy(enabled=False)`` and
  with the default policy (bubblewrap + prlimit);
- **spawn**: the bare start of ``/bin/true`` from asyncio — directly, under ``prlimit`` only,
  under ``bwrap`` only (the same sandbox arguments), and under both (what a case pays) — to
  say where the added time goes.

Rounds alternate the variants (after one untimed warm-up round); the medians of the per-round
means are reported as wall ms per case, with the added ms and the ratio against sandbox off,
and as CPU ms per case (user + system of this process and its children: steadier than wall
clock when the machine is shared), with the load average before and after.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from benchbook.contracts.dataset import PromptEnv
from benchbook.contracts.harness import CommandHarness
from benchbook.contracts.run import CaseInput
from benchbook.runtime import RuntimeConfig, open_environment, run_harness
from benchbook.runtime.sandbox import SandboxPolicy, bwrap_argv

HARNESS = CommandHarness.model_validate(
    {"id": "true", "version": "1.0.0", "config": {"argv": ["/bin/true"]}}
)
CASE = CaseInput(case_id="c", env=PromptEnv(), task="t", timeout_s=60)


async def _case(config: RuntimeConfig) -> None:
    async with open_environment(CASE, config) as workspace:
        result = await run_harness(HARNESS, CASE, workspace, {})
    if result.status != "ok":
        raise SystemExit(f"the /bin/true case failed: {result.error}")


async def _spawn(argv: list[str]) -> None:
    proc = await asyncio.create_subprocess_exec(*argv, start_new_session=True)
    if await proc.wait() != 0:
        raise SystemExit(f"{argv[0]} failed")


def _variants(work: Path) -> dict[str, Callable[[], Awaitable[None]]]:
    off = RuntimeConfig(work_root=work / "off", mirrors=work / "m", sandbox=SandboxPolicy(False))
    on = RuntimeConfig(work_root=work / "on", mirrors=work / "m", sandbox=SandboxPolicy())
    cwd = work / "spawn"
    cwd.mkdir()
    full = bwrap_argv(["/bin/true"], policy=SandboxPolicy(), cwd=cwd, writable=[cwd])
    bwrap_only = full[full.index(SandboxPolicy().bwrap) :]
    prlimit_only = [*full[: full.index(SandboxPolicy().bwrap)], "/bin/true"]
    return {
        "case, sandbox off": lambda: _case(off),
        "case, sandbox on": lambda: _case(on),
        "spawn /bin/true": lambda: _spawn(["/bin/true"]),
        "spawn prlimit": lambda: _spawn(prlimit_only),
        "spawn bwrap": lambda: _spawn(bwrap_only),
        "spawn prlimit+bwrap": lambda: _spawn(full),
    }


def _cpu_s() -> float:
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


async def _measure(
    cases: int, rounds: int
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Per variant, the wall and the CPU ms per case of each timed round."""
    with tempfile.TemporaryDirectory(prefix="bench-sandbox-") as tmp:
        variants = _variants(Path(tmp))
        wall: dict[str, list[float]] = {name: [] for name in variants}
        cpu: dict[str, list[float]] = {name: [] for name in variants}
        for round_ in range(rounds + 1):
            for name, run in variants.items():
                started, cpu_started = time.perf_counter(), _cpu_s()
                for _ in range(cases):
                    await run()
                if round_:  # round 0 warms up (the sandbox's /etc copy, caches)
                    wall[name].append((time.perf_counter() - started) * 1000 / cases)
                    cpu[name].append((_cpu_s() - cpu_started) * 1000 / cases)
        return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100, help="cases per variant and round")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    load_before = os.getloadavg()
    wall, cpu = asyncio.run(_measure(args.cases, args.rounds))
    load_after = os.getloadavg()
    medians = {name: statistics.median(values) for name, values in wall.items()}
    cpu_medians = {name: statistics.median(values) for name, values in cpu.items()}
    print(f"{args.cases} cases x {args.rounds} rounds (medians of round means), per case")
    for name, value in medians.items():
        spread = f"{min(wall[name]):.2f}-{max(wall[name]):.2f}"
        line = f"  {name:<22} wall {value:7.2f} ms (rounds {spread})"
        print(f"{line}  CPU {cpu_medians[name]:6.2f} ms")
    on, off = "case, sandbox on", "case, sandbox off"
    print(
        f"sandbox added per case: wall {medians[on] - medians[off]:.2f} ms"
        f" (ratio {medians[on] / medians[off]:.2f}x),"
        f" CPU {cpu_medians[on] - cpu_medians[off]:.2f} ms"
        f" (ratio {cpu_medians[on] / cpu_medians[off]:.2f}x)"
    )
    print(
        "load average before: {:.2f} {:.2f} {:.2f}; after: {:.2f} {:.2f} {:.2f}".format(
            *load_before, *load_after
        )
    )


if __name__ == "__main__":
    main()
