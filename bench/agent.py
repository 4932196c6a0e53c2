"""Agent loop overhead per step: ``.venv/bin/python -m bench.agent`` (``--help`` for options).

The scripted OpenAI-compatible server of the test suite (``tests/openaiserver``) answers every
request with the same short text and no tool call, so the ``agent`` harness loops until
``max_steps`` (``limit: steps``): each step is one request, the reply's bookkeeping (trace,
usage, ``model_call`` event, limits) and the nudge message. The baseline is the raw ``openai``
client calling the same server with the same conversation growth (assistant reply + nudge per
step) and the same ``tools`` array. Both run in this process, best of ``--repeat``; the ratio
is agent ms per step / raw ms per step. Separately: one sandboxed ``bash true`` tool call (the
cost a tool step adds — a bubblewrap start), p50 over ``--tool-calls`` calls.

Exits non-zero when the agent does not end with ``limit: steps`` after exactly ``--steps``
requests, or when the overhead ratio exceeds ``--max-ratio``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

import openai
from tests.openaiserver import OpenAIServer, script, tool_call

from benchbook.contracts.dataset import PromptEnv
from benchbook.contracts.harness import AgentHarness
from benchbook.contracts.run import CaseInput
from benchbook.runtime.environments import Workspace
from benchbook.runtime.harnesses.agent import run_agent
from benchbook.runtime.harnesses.agent.loop import NUDGE
from benchbook.runtime.harnesses.agent.prompts import first_messages
from benchbook.runtime.harnesses.agent.tools import tool_schemas

REPLY = "Thinking about it."


def harness(server: OpenAIServer, steps: int) -> AgentHarness:
    config = {"base_url": server.url, "model": "test-model", "max_steps": steps}
    return AgentHarness.model_validate({"id": "bench", "version": "1.0.0", "config": config})


Timing = tuple[float, float]
"""``(wall seconds, process CPU seconds)`` — the CPU includes the server's thread, the same
work in both measurements."""


async def agent_seconds(server: OpenAIServer, steps: int, workdir: Path) -> Timing:
    """Wall and CPU seconds of one agent case of ``steps`` text-only steps."""
    agent = harness(server, steps)
    case = CaseInput(case_id="b", env=PromptEnv(), task="Count the stars.", timeout_s=3600)
    started, cpu = time.perf_counter(), time.process_time()
    result = await run_agent(agent, case, Workspace(workdir=workdir), {})
    seconds = time.perf_counter() - started, time.process_time() - cpu
    if result.trace.limit != "steps" or len(result.trace.events) != steps + 1:
        raise SystemExit(f"the agent did not loop {steps} steps: {result}")
    return seconds


async def raw_seconds(server: OpenAIServer, steps: int) -> Timing:
    """Wall and CPU seconds of the same requests made by the raw ``openai`` client."""
    agent = harness(server, steps)
    tools = list(agent.config.tools)
    case = CaseInput(case_id="b", env=PromptEnv(), task="Count the stars.", timeout_s=3600)
    messages = first_messages(None, case, tools)
    schemas = tool_schemas(tools)
    client = openai.AsyncOpenAI(base_url=server.url, api_key="EMPTY", max_retries=2)
    started, cpu = time.perf_counter(), time.process_time()
    for _ in range(steps):
        reply = await client.chat.completions.create(
            model="test-model",
            messages=messages,  # type: ignore[arg-type]
            tools=schemas,  # type: ignore[arg-type]
        )
        messages.append({"role": "assistant", "content": reply.choices[0].message.content})
        messages.append({"role": "user", "content": NUDGE})
    seconds = time.perf_counter() - started, time.process_time() - cpu
    await client.close()
    return seconds


async def tool_ms(server: OpenAIServer, calls: int, workdir: Path) -> list[float]:
    """Per-call wall ms of ``bash true`` in the sandbox, from the trace's tool calls."""
    server.reply = script([tool_call("bash", command="true")])
    agent = harness(server, calls)
    case = CaseInput(case_id="b", env=PromptEnv(), task="Run true.", timeout_s=3600)
    result = await run_agent(agent, case, Workspace(workdir=workdir), {})
    return [float(c["duration_ms"]) for c in result.trace.tool_calls]  # type: ignore[arg-type]


async def measure(args: argparse.Namespace) -> int:
    with OpenAIServer() as server, tempfile.TemporaryDirectory() as tmp:
        server.reply = lambda body: REPLY
        workdir = Path(tmp)
        await agent_seconds(server, 3, workdir)  # warm: imports, the connection pool
        await raw_seconds(server, 3)
        agent = min([await agent_seconds(server, args.steps, workdir) for _ in range(args.repeat)])
        raw = min([await raw_seconds(server, args.steps) for _ in range(args.repeat)])
        durations = await tool_ms(server, args.tool_calls, workdir)
    agent_ms, raw_ms = agent[0] * 1000 / args.steps, raw[0] * 1000 / args.steps
    agent_cpu, raw_cpu = agent[1] * 1000 / args.steps, raw[1] * 1000 / args.steps
    ratio = agent_ms / raw_ms
    print(
        f"agent loop: {args.steps} steps, {agent_ms:.2f} ms/step wall, {agent_cpu:.2f} ms/step "
        f"CPU; raw openai client: {raw_ms:.2f} ms/step wall, {raw_cpu:.2f} ms/step CPU"
    )
    print(
        f"overhead: ratio {ratio:.2f} wall ({agent_ms - raw_ms:+.2f} ms/step), "
        f"{agent_cpu / raw_cpu:.2f} CPU ({agent_cpu - raw_cpu:+.2f} ms/step), best of {args.repeat}"
    )
    print(
        f"sandboxed tool call (bash true): p50 {statistics.median(durations):.0f} ms, "
        f"max {max(durations):.0f} ms over {len(durations)} calls"
    )
    if ratio > args.max_ratio:
        print(f"FAIL: ratio {ratio:.2f} > {args.max_ratio}", file=sys.stderr)
        return 1
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--steps", type=int, default=100, help="model requests per case")
    parser.add_argument("--repeat", type=int, default=3, help="best of N")
    parser.add_argument("--tool-calls", type=int, default=20, help="sandboxed calls timed")
    parser.add_argument("--max-ratio", type=float, default=1.5, help="fail above this ratio")
    return asyncio.run(measure(parser.parse_args()))


if __name__ == "__main__":
    raise SystemExit(main())
