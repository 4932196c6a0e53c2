"""The ``python`` harness kind (SPEC H.1): ``package.module:function`` called with the case input.

``f(case_input: CaseInput) -> str | HarnessOutput`` (a dict validating as
:class:`~benchbook.contracts.run.HarnessOutput` is accepted too), sync or async. Async functions
are awaited under ``asyncio.wait_for``; sync ones run in a worker thread (``asyncio.to_thread``)
under the same timeout. **A thread cannot be killed**: on timeout the case is recorded as
``error: timeout`` at once, but a sync function that never returns keeps its thread (and whatever
it holds) until the process exits — write long-running harnesses as async functions or as
``command`` harnesses.

The callable sees its environment through :func:`current_workspace` (``workdir``, ``env_vars``
such as ``BENCHBOOK_CDP_URL``): a context variable, so concurrent cases each see their own.
"""

from __future__ import annotations

import asyncio
import contextvars
import importlib
import inspect
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from benchbook.contracts.harness import PythonHarness
from benchbook.contracts.run import CaseInput, HarnessOutput, RuntimeResult, Trace
from benchbook.runtime.environments import Workspace

_WORKSPACE: contextvars.ContextVar[Workspace] = contextvars.ContextVar("benchbook_workspace")


def current_workspace() -> Workspace:
    """The workspace of the case whose python harness is running (also inside its thread).

    Raises:
        LookupError: called outside a python harness run.
    """
    return _WORKSPACE.get()


def load_callable(path: str) -> Callable[..., Any]:
    """Import ``package.module:function`` (the function part may be dotted: ``Class.method``).

    Raises:
        ImportError: the module cannot be imported or has no such attribute.
        TypeError: the attribute is not callable.
    """
    module_name, _, attr_path = path.partition(":")
    target: Any = importlib.import_module(module_name)
    for step in attr_path.split("."):
        try:
            target = getattr(target, step)
        except AttributeError as exc:
            raise ImportError(f"{module_name} has no attribute {attr_path!r}") from exc
    if not callable(target):
        raise TypeError(f"{attr_path!r} is not callable")
    return target  # type: ignore[no-any-return]


async def _call(fn: Callable[..., Any], case_input: CaseInput, timeout_s: float) -> Any:
    """Call ``fn`` under the timeout (see the module docstring); TimeoutError when it expires."""
    if inspect.iscoroutinefunction(fn):
        return await asyncio.wait_for(fn(case_input), timeout_s)
    value = await asyncio.wait_for(asyncio.to_thread(fn, case_input), timeout_s)
    if inspect.isawaitable(value):  # a sync wrapper (partial, decorator) returning a coroutine
        return await asyncio.wait_for(value, timeout_s)
    return value


def _fill(trace: Trace, value: Any) -> str | None:
    """Copy the callable's return value into ``trace``; an error text when it is unusable."""
    if isinstance(value, str):
        trace.answer = value
        return None
    if isinstance(value, dict):
        try:
            value = HarnessOutput.model_validate(value)
        except ValidationError as exc:
            return f"invalid harness output: {exc.errors()[0]['msg']}"
    if not isinstance(value, HarnessOutput):
        return f"invalid harness output: expected str or HarnessOutput, got {type(value).__name__}"
    trace.answer = value.answer
    trace.messages = list(value.messages)
    trace.tool_calls = list(value.tool_calls)
    trace.usage = value.usage.model_copy()
    trace.model = value.model
    trace.events.extend(value.events)
    return None


async def run_python(
    harness: PythonHarness, case_input: CaseInput, workspace: Workspace
) -> RuntimeResult:
    """Call the harness's function on one (case, sample); never raises for a harness failure.

    Returns:
        RuntimeResult: ``ok``; or ``error`` with ``timeout`` (``case_input.timeout_s``),
        ``cannot import <callable>: <ExcType>: <message>``, ``<ExcType>: <message>`` for an
        exception raised by the function, or ``invalid harness output: …``.
    """
    started_at = datetime.now(UTC)
    started = time.monotonic()
    trace = Trace(started_at=started_at)
    try:
        fn = load_callable(harness.config.callable)
    except Exception as exc:  # an import runs arbitrary module code: anything may be raised
        problem = f"cannot import {harness.config.callable}: {type(exc).__name__}: {exc}"
        return RuntimeResult(status="error", error=problem, trace=trace)
    token = _WORKSPACE.set(workspace)
    error: str | None
    try:
        value = await _call(fn, case_input, case_input.timeout_s)
        error = _fill(trace, value)
    except TimeoutError:
        error = "timeout"
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
    finally:
        _WORKSPACE.reset(token)
        trace.duration_ms = int((time.monotonic() - started) * 1000)
    if error is not None:
        return RuntimeResult(status="error", error=error, trace=trace)
    return RuntimeResult(status="ok", trace=trace)
