"""The ``python`` harness kind (SPEC H.1): real callables imported by name."""

from __future__ import annotations

import time

from benchbook.contracts.dataset import PromptEnv
from benchbook.contracts.harness import PythonHarness
from benchbook.contracts.run import CaseInput
from tests.runtime.runner import RunCase


def _harness(function: str, module: str = "tests.runtime.python_agents") -> PythonHarness:
    return PythonHarness.model_validate(
        {"id": "py", "version": "1.0.0", "config": {"callable": f"{module}:{function}"}}
    )


def _case(timeout_s: int = 30) -> CaseInput:
    return CaseInput(case_id="c7", env=PromptEnv(), task="two plus two", timeout_s=timeout_s)


def test_a_sync_callable_answers_and_sees_its_workspace(run_case: RunCase) -> None:
    result = run_case(_harness("shout"), _case())
    assert result.status == "ok", result.error
    assert result.trace.answer == "TWO PLUS TWO in work"
    assert result.trace.started_at is not None


def test_an_async_callable_is_awaited(run_case: RunCase) -> None:
    result = run_case(_harness("shout_async"), _case())
    assert (result.status, result.trace.answer) == ("ok", "TWO PLUS TWO!")


def test_an_exception_becomes_an_error_with_its_type_and_message(run_case: RunCase) -> None:
    result = run_case(_harness("fail"), _case())
    assert (result.status, result.error) == ("error", "ValueError: cannot solve c7")


def test_a_harness_output_fills_the_trace(run_case: RunCase) -> None:
    result = run_case(_harness("structured"), _case())
    trace = result.trace
    assert result.status == "ok", result.error
    assert trace.answer == "4"
    assert trace.messages[0] == {"role": "user", "content": "two plus two"}
    assert trace.tool_calls == [{"name": "calculator", "arguments": {"expr": "2+2"}}]
    assert (trace.usage.input_tokens, trace.usage.output_tokens) == (12, 1)
    assert trace.model == "tiny-model"


def test_a_dict_that_validates_as_harness_output_is_accepted(run_case: RunCase) -> None:
    result = run_case(_harness("as_dict"), _case())
    assert result.status == "ok", result.error
    assert result.trace.answer == "from a dict"
    assert result.trace.usage.output_tokens == 4


def test_a_return_value_of_the_wrong_type_is_an_error(run_case: RunCase) -> None:
    result = run_case(_harness("wrong_type"), _case())
    assert result.status == "error"
    assert result.error == "invalid harness output: expected str or HarnessOutput, got int"


def test_an_import_failure_names_the_callable(run_case: RunCase) -> None:
    missing_module = run_case(_harness("f", module="tests.runtime.no_such_module"), _case())
    assert missing_module.status == "error"
    assert missing_module.error is not None
    assert missing_module.error.startswith(
        "cannot import tests.runtime.no_such_module:f: ModuleNotFoundError"
    )
    missing_function = run_case(_harness("no_such_function"), _case())
    assert missing_function.error is not None
    assert missing_function.error.startswith(
        "cannot import tests.runtime.python_agents:no_such_function: ImportError"
    )


def test_an_async_callable_past_its_timeout_is_a_timeout(run_case: RunCase) -> None:
    started = time.monotonic()
    result = run_case(_harness("slow_async"), _case(timeout_s=1))
    assert (result.status, result.error) == ("error", "timeout")
    assert time.monotonic() - started < 5


def test_a_sync_callable_past_its_timeout_is_a_timeout(run_case: RunCase) -> None:
    result = run_case(_harness("slow_sync"), _case(timeout_s=1))
    assert (result.status, result.error) == ("error", "timeout")
    assert 900 <= result.trace.duration_ms < 1450
