"""What runs inside a Ray task (SPEC H.4, ``ray`` executor): one (case, sample) on a worker.

This module is imported by the Ray worker process, so it depends only on the contracts and the
runtime (never on grading, the store or the services). The task receives two JSON documents:

- ``shared`` (one object per run, put in the object store once): ``{harness, secrets,
  runtime: {work_root, mirrors, chromium, tail_bytes, sandbox, browser_allowed_hosts,
  git_allowed_hosts}}`` —
  ``secrets`` holds only the values the harness names (command ``secrets``, openai
  ``api_key_secret``); ``sandbox`` is the server's :class:`SandboxPolicy`, so a worker starts
  case processes in the same sandbox (it needs bubblewrap too, ``docs/security.md``);
- ``case_input``: the :class:`~benchbook.contracts.run.CaseInput` (gold already left out).

It provisions the case's environment on the worker (repo checkout from the worker's mirror
cache, browser, working directory), runs the harness there and returns the
:class:`~benchbook.contracts.run.RuntimeResult` as JSON bytes. It never raises for a harness
failure (the runtime turns those into ``status = error``); Benchbook's own failure becomes an
``internal:`` error result too, so the only exceptions the driver sees are Ray's own (a lost
worker or node).
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import threading
from pathlib import Path
from typing import Any

import orjson
from pydantic import TypeAdapter

from benchbook.contracts.harness import Harness
from benchbook.contracts.run import CaseInput, RuntimeResult, Trace
from benchbook.runtime import RuntimeConfig, open_environment, run_harness
from benchbook.runtime.sandbox import SandboxLimits, SandboxPolicy

_HARNESS: TypeAdapter[Any] = TypeAdapter(Harness)


def shared_payload(harness: Any, secrets: dict[str, str], runtime: RuntimeConfig) -> bytes:
    """The per-run part of every task: the harness spec, the named secrets and the paths."""
    return orjson.dumps(
        {
            "harness": _HARNESS.dump_python(harness, mode="json"),
            "secrets": secrets,
            "runtime": {
                "work_root": str(runtime.work_root),
                "mirrors": str(runtime.mirrors),
                "chromium": runtime.chromium,
                "tail_bytes": runtime.tail_bytes,
                "sandbox": dataclasses.asdict(
                    runtime.sandbox, dict_factory=lambda kv: {k: _plain(v) for k, v in kv}
                ),
                "browser_allowed_hosts": list(runtime.browser_allowed_hosts),
                "git_allowed_hosts": list(runtime.git_allowed_hosts),
            },
        }
    )


@functools.lru_cache(maxsize=4)
def _parse_shared(shared: bytes) -> tuple[Any, RuntimeConfig, dict[str, str]]:
    """The harness, runtime paths and secrets of a run (parsed once per worker process)."""
    spec = orjson.loads(shared)
    rt = spec["runtime"]
    runtime = RuntimeConfig(
        work_root=Path(rt["work_root"]),
        mirrors=Path(rt["mirrors"]),
        chromium=rt["chromium"],
        tail_bytes=rt["tail_bytes"],
        sandbox=_policy(rt["sandbox"]),
        browser_allowed_hosts=tuple(rt["browser_allowed_hosts"]),
        git_allowed_hosts=tuple(rt.get("git_allowed_hosts", ())),
    )
    return _HARNESS.validate_python(spec["harness"]), runtime, spec["secrets"]


def _plain(value: Any) -> Any:
    """Paths (and tuples of them) as JSON values."""
    if isinstance(value, tuple):
        return [str(v) if isinstance(v, Path) else v for v in value]
    return str(value) if isinstance(value, Path) else value


def _policy(raw: dict[str, Any]) -> SandboxPolicy:
    """The :class:`SandboxPolicy` :func:`shared_payload` serialized."""
    return SandboxPolicy(
        enabled=raw["enabled"],
        bwrap=raw["bwrap"],
        prlimit=raw["prlimit"],
        limits=SandboxLimits(**raw["limits"]),
        ro_paths=tuple(Path(p) for p in raw["ro_paths"]),
        denied_paths=tuple(Path(p) for p in raw["denied_paths"]),
        python_prefixes=raw["python_prefixes"],
        allowed_inside=tuple(Path(p) for p in raw["allowed_inside"]),
        argv_files=bool(raw.get("argv_files", False)),
    )


_loops = threading.local()


def _runner() -> asyncio.Runner:
    """This thread's event loop, kept from task to task: a Ray worker process runs many tasks,
    and a fresh loop per task (``asyncio.run``) would also start and stop the loop's thread
    pool (where sync harnesses and file work run) every time — about 1 ms of CPU a case."""
    runner: asyncio.Runner | None = getattr(_loops, "runner", None)
    if runner is None:
        runner = _loops.runner = asyncio.Runner()
    return runner


def run_case(shared: bytes, case_input: bytes) -> bytes:
    """The Ray task body: run one (case, sample) here and return its RuntimeResult as JSON."""
    try:
        harness, runtime, secrets = _parse_shared(shared)
        ci = CaseInput.model_validate_json(case_input)
        result = _runner().run(_run(harness, ci, runtime, dict(secrets)))
    except Exception as exc:  # Benchbook's own failure on the worker is data as well
        result = RuntimeResult(
            status="error", error=f"internal: {type(exc).__name__}: {exc}", trace=Trace()
        )
    return result.model_dump_json().encode()


async def _run(
    harness: Any, ci: CaseInput, runtime: RuntimeConfig, secrets: dict[str, str]
) -> RuntimeResult:
    async with open_environment(ci, runtime) as workspace:
        return await run_harness(harness, ci, workspace, secrets)
