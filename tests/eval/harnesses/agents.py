"""Tiny deterministic python harnesses for run tests.

Each takes a ``CaseInput`` and answers from its task alone — they never see gold, so a wrong
answer is a wrong answer.
"""

from __future__ import annotations

import asyncio
import re

from benchbook.contracts.run import CaseInput, HarnessOutput, Usage


def add(case: CaseInput) -> str:
    """Answers ``a+b`` tasks correctly."""
    a, b = map(int, re.findall(r"-?\d+", case.task)[:2])
    return str(a + b)


def add_wrong_on_odd_samples(case: CaseInput) -> str:
    """Correct on even samples, off by one on odd ones (for pass@k tables)."""
    a, b = map(int, re.findall(r"-?\d+", case.task)[:2])
    return str(a + b + (case.sample % 2))


def constant(case: CaseInput) -> str:
    """Always ``42`` (the overhead benchmark's harness)."""
    return "42"


def priced(case: CaseInput) -> HarnessOutput:
    """Correct answers that cost 1,000,000 input tokens of ``test-model`` each."""
    return HarnessOutput(
        answer=add(case), usage=Usage(input_tokens=1_000_000, output_tokens=0), model="test-model"
    )


def explode(case: CaseInput) -> str:
    """Fails on every case whose id ends in 1."""
    if case.case_id.endswith("1"):
        raise ValueError(f"cannot do {case.case_id}")
    return add(case)


async def slow(case: CaseInput) -> str:
    """Sleeps 0.2 s then answers (for cancel tests)."""
    await asyncio.sleep(0.2)
    return add(case)


def leak_probe(case: CaseInput) -> str:
    """Returns the whole input it received, as JSON (gold-leak tests search it)."""
    return case.model_dump_json()


async def logged(case: CaseInput) -> str:
    """Appends ``pid case_id sample`` to the file ``$BENCHBOOK_TEST_HARNESS_LOG`` (who ran
    what, across processes), sleeps 0.15 s, then answers (replica takeover tests)."""
    import os

    with open(os.environ["BENCHBOOK_TEST_HARNESS_LOG"], "a") as log:
        log.write(f"{os.getpid()} {case.case_id} {case.sample}\n")
    await asyncio.sleep(0.15)
    return add(case)


def add_wrong_on_threes(case: CaseInput) -> str:
    """Off by one when the first number of the task is a multiple of 3 (``What is 3+1?`` → 5),
    correct otherwise (a candidate that answers differently from :func:`add`)."""
    a, b = map(int, re.findall(r"-?\d+", case.task)[:2])
    return str(a + b + (a % 3 == 0))


#: How many times :func:`counted` was called in this process.
CALLS = [0]


def counted(case: CaseInput) -> str:
    """Counts its calls in :data:`CALLS`, then answers at once (writer back-pressure tests)."""
    CALLS[0] += 1
    return add(case)


def final_18(case: CaseInput) -> str:
    """Always ``FINAL ANSWER: 18`` (issue 28: a harness whose answers were decided in advance)."""
    return "FINAL ANSWER: 18"


def explode_all(case: CaseInput) -> str:
    """Fails on every case."""
    raise ValueError(f"cannot do {case.case_id}")


def priced_final_18(case: CaseInput) -> HarnessOutput:
    """``FINAL ANSWER: 18`` at 1,000,000 input tokens of ``test-model`` ($1 with the tests'
    pricing table)."""
    return HarnessOutput(
        answer="FINAL ANSWER: 18",
        usage=Usage(input_tokens=1_000_000, output_tokens=0),
        model="test-model",
    )


def last_number(case: CaseInput) -> str:
    """The last number of the task, as text ("" when it has none): the run that imported
    Inspect and lm-eval logs answer the same (tests/services/interop_logs.py)."""
    found = re.findall(r"\d+", case.task)
    return found[-1] if found else ""


def nul_answer(case: CaseInput) -> str:
    """Answers text holding a NUL byte, as a harness printing a binary would."""
    return f"{case.case_id}\x00binary"
