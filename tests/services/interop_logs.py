"""Real logs of the real tools, made offline for the import tests (issue 31).

- :func:`inspect_log` runs Inspect AI (``inspect_ai.eval``) with its ``mockllm`` model over
  samples built from the flat rows of a Benchbook export (``datasets.flat.flat_row``: the same
  ``id``/``input``/``target`` as ``client.to_inspect_dataset``), scored by Inspect's own
  ``match(numeric=True)``. The mock answers ``The answer is <last number of the question>.``,
  as the python harness ``tests.eval.harnesses.agents:last_number`` does in a native run.
- :func:`last_number_reply` is that answer, for the local OpenAI-compatible server lm-eval talks
  to.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from benchbook.contracts.dataset import Case
from benchbook.datasets.flat import flat_row
from tests.conftest import import_or_need


def last_number(text: str) -> str:
    """The last run of digits in ``text`` ("" without one)."""
    found = re.findall(r"\d+", text)
    return found[-1] if found else ""


def inspect_log(
    cases: Iterable[Case],
    log_dir: Path,
    name: str,
    epochs: int = 1,
    log_format: str = "eval",
) -> tuple[Path, Any]:
    """Run Inspect over ``cases`` with ``mockllm``; ``(the log file, the EvalLog)``."""
    inspect_ai = import_or_need("inspect_ai")
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate

    samples = [
        Sample(id=row["id"], input=row["input"], target=row["target"])
        for row in map(flat_row, cases)
    ]

    def mock(messages: list[Any], *_: Any) -> ModelOutput:
        question = messages[-1].text
        out = ModelOutput.from_content("mockllm/model", f"The answer is {last_number(question)}.")
        usage = ModelUsage(input_tokens=len(question.split()), output_tokens=4, total_tokens=0)
        return out.model_copy(update={"usage": usage})

    task = inspect_ai.Task(
        dataset=MemoryDataset(samples, name=name),
        solver=generate(),
        scorer=match(numeric=True),
        epochs=epochs,
        name="gsm8k",
    )
    model = get_model("mockllm/model", custom_outputs=mock)
    # log_realtime=False: no live-viewing buffer (a SQLite database Inspect writes every sample
    # event to, ~40% of the eval's time here); the log file itself is written the same.
    [log] = inspect_ai.eval(
        task,
        model=model,
        log_dir=str(log_dir),
        display="none",
        log_format=log_format,
        log_realtime=False,
    )
    assert log.status == "success", log.error
    return Path(log.location), log


def reasoning_reply(body: dict[str, Any]) -> str:
    """The local OpenAI-compatible server's reply for lm-eval: a model that reasons before
    answering with the last number of the question (no ``####``, so lm-eval's
    ``strict-match`` finds nothing and ``flexible-extract`` finds the number)."""
    from tests.openaiserver import last_user_text

    return f"Let me think step by step.\nSo the answer is {last_number(last_user_text(body))}."


def lm_eval_output(
    export: Path, task: str, base_url: str | None, out: Path, limit: int
) -> dict[str, Any]:
    """Run lm-eval (its Python entry, as ``lm_eval --log_samples`` does) on the exported task
    against the server at ``base_url`` with ``local-chat-completions`` (None: ``--model
    dummy``); write its
    ``results_*.json`` and ``samples_<task>_*.jsonl`` below ``out``; its results dict.

    The task manager reads only the export's folder (``include_defaults=False``): the CLI
    indexes every built-in task first, ~65 s on this machine.
    """
    lm_eval = import_or_need("lm_eval")
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.tasks import TaskManager

    tracker = EvaluationTracker(output_path=str(out))
    model_args = {
        "model": "mock",
        "base_url": f"{base_url}/chat/completions",
        "num_concurrent": 1,
        "max_retries": 1,
        "tokenized_requests": False,
    }
    results = lm_eval.simple_evaluate(
        model="local-chat-completions" if base_url else "dummy",
        model_args=model_args if base_url else {},
        tasks=[task],
        task_manager=TaskManager(include_path=str(export), include_defaults=False),
        apply_chat_template=bool(base_url),
        limit=limit,
        log_samples=True,
        evaluation_tracker=tracker,
    )
    assert results is not None
    samples = results.pop("samples")
    tracker.save_results_aggregated(results=results, samples=samples)
    tracker.save_results_samples(task_name=task, samples=samples[task])
    return dict(results)
