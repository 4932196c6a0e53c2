"""GSM8K (the real 1,319 test problems of ``../shared/data``) through the client into Inspect AI,
Hugging Face ``datasets`` and lm-eval (issue 16 acceptance). The adapters only read the HTTP
API, so one backend (SQLite) is enough here; test_client covers both."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchbook.client import Client, to_inspect_dataset
from benchbook.contracts import Case
from benchbook.datasets.flat import flat_row
from tests.client.conftest import Live
from tests.conftest import import_or_need

pytestmark = pytest.mark.parametrize("live", ["sqlite"], indirect=True)


@pytest.fixture
def gsm8k(live: Live, shared_data: Path) -> tuple[Client, list[Case]]:
    """gsm8k@1.0.0 imported through an import job (the catalog recipe over the real file)."""
    client = live.client()
    if not client.datasets.list(search="gsm8k").total:
        text = (shared_data / "gsm8k" / "test.jsonl").read_text()
        progress: list[int] = []
        job = client.imports.run(
            {"benchmark": "gsm8k", "version": "1.0.0", "text": text},
            progress=lambda j: progress.append(j.progress.cases_built),
        )
        assert job.result is not None and job.result.cases == 1319 and progress[-1] == 1319
    return client, list(client.cases("gsm8k@1.0.0", page_size=500))


def test_inspect_reads_every_case_without_gold_and_evals_with_its_mock_model(
    gsm8k: tuple[Client, list[Case]], tmp_path: Path
) -> None:
    inspect_ai = import_or_need("inspect_ai")
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate

    client, cases = gsm8k
    dataset = to_inspect_dataset("gsm8k@1.0.0", client)
    assert len(dataset) == len(cases) == 1319 and dataset.name == "gsm8k@1.0.0"
    for sample, case in zip(dataset, cases, strict=True):
        assert (sample.id, sample.input, sample.target) == (case.id, case.task, case.expected)
        assert "answer" not in (sample.metadata or {})  # the worked solution is gold
    assert "####" not in json.dumps([s.metadata for s in dataset])

    answers = {s.input: s.target for s in dataset}
    asked: list[str] = []

    def mock(messages: list[Any], *_: Any) -> ModelOutput:
        question = messages[-1].text
        asked.append(question)
        right = len(asked) % 2 == 1  # every other question answered right
        out = ModelOutput.from_content("mockllm/model", answers[question] if right else "no idea")
        # with usage given, the mock model counts no tokens (tiktoken would download its table)
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    model = get_model("mockllm/model", custom_outputs=mock)
    task = inspect_ai.Task(dataset=dataset, solver=generate(), scorer=match(numeric=True))
    [log] = inspect_ai.eval(task, model=model, limit=10, log_dir=str(tmp_path), display="none")
    assert log.status == "success" and log.results is not None
    assert log.results.scores[0].metrics["accuracy"].value == 0.5 and len(asked) == 10


def test_the_hf_export_reads_back_with_datasets_and_lm_eval(
    gsm8k: tuple[Client, list[Case]], tmp_path: Path
) -> None:
    datasets = import_or_need("datasets")
    client, cases = gsm8k
    out = tmp_path / "gsm8k-hf"
    assert client.datasets.export("gsm8k@1.0.0", out, "hf") == 1319
    rows = [flat_row(c) for c in cases]
    loaded = datasets.load_dataset(str(out), cache_dir=str(tmp_path / "cache"))["test"]
    assert loaded.to_list() == rows

    lm_eval_tasks = import_or_need("lm_eval.tasks")
    manager = lm_eval_tasks.TaskManager(include_path=str(out), include_defaults=False)
    task = lm_eval_tasks.get_task_dict(["benchbook_gsm8k_1_0_0"], manager)["benchbook_gsm8k_1_0_0"]
    docs = list(task.test_docs())
    assert len(docs) == 1319 and task.config.dataset_path == "json"
    assert [task.doc_to_text(d) for d in docs[:50]] == [c.task for c in cases[:50]]
    assert [task.doc_to_target(d) for d in docs] == [c.expected for c in cases]
