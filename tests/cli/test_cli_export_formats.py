"""``benchbook datasets export --format jsonl|parquet|hf`` (issue 16): JSONL stays the default;
the directory formats read back with pyarrow and hold an lm-eval task over their data file."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import yaml

from tests.cli.conftest import invoke, write_dataset

CASES = [
    {"id": "c1", "env": {"kind": "prompt"}, "task": "What is 2+2?", "expected": "4"},
    {
        "id": "c2",
        "env": {"kind": "prompt"},
        "task": "What is 3+3?",
        "expected": 6,
        "tags": ["easy"],
        "metadata": {"source": "x", "work": "3+3"},
        "gold_fields": ["work"],
    },
]
ROWS = [
    {"id": "c1", "input": "What is 2+2?", "target": "4", "tags": [], "metadata": "{}"},
    {
        "id": "c2",
        "input": "What is 3+3?",
        "target": "6",
        "tags": ["easy"],
        "metadata": '{"source":"x"}',
    },
]
#: lm-eval's documented TaskConfig keys (docs/task_guide.md) that an export may use.
LM_EVAL_KEYS = {
    "task", "task_alias", "tag", "dataset_path", "dataset_name", "dataset_kwargs",
    "training_split", "validation_split", "test_split", "fewshot_split", "process_docs",
    "doc_to_text", "doc_to_target", "doc_to_choice", "description", "target_delimiter",
    "fewshot_delimiter", "num_fewshot", "output_type", "generation_kwargs", "repeats",
    "filter_list", "metric_list", "metadata",
}  # fmt: skip


def test_export_formats(cli_env: dict[str, str], tmp_path: Path) -> None:
    assert (
        invoke(cli_env, "register", write_dataset(tmp_path, "qa.json", cases=CASES)).exit_code == 0
    )
    default = invoke(cli_env, "datasets", "export", "qa")
    assert default.exit_code == 0
    assert [json.loads(line)["id"] for line in default.stdout.splitlines()] == ["c1", "c2"]
    jsonl = invoke(cli_env, "datasets", "export", "qa", "--format", "jsonl")
    assert jsonl.stdout == default.stdout

    for fmt, data in (("parquet", "test.parquet"), ("hf", "test.jsonl")):
        out = tmp_path / fmt
        result = invoke(cli_env, "datasets", "export", "qa", "-f", fmt, "-o", str(out))
        assert result.exit_code == 0, result.output
        assert "exported 2 cases" in result.stdout
        path = out / "data" / data
        rows = (
            pq.read_table(path).to_pylist()
            if fmt == "parquet"
            else [json.loads(line) for line in path.read_text().splitlines()]
        )
        assert rows == ROWS
        task = yaml.safe_load((out / "lm_eval_task.yaml").read_text())
        assert set(task) <= LM_EVAL_KEYS
        assert task["dataset_path"] == ("parquet" if fmt == "parquet" else "json")
        assert task["dataset_kwargs"]["data_files"]["test"] == str(path.resolve())
        assert task["test_split"] == "test" and task["task"] == "benchbook_qa_1_0_0"
        assert "path: data/" + data in (out / "README.md").read_text()

    again = invoke(cli_env, "datasets", "export", "qa", "-f", "hf", "-o", str(tmp_path / "hf"))
    assert again.exit_code != 0 and "not an empty directory" in again.output
    no_out = invoke(cli_env, "datasets", "export", "qa", "-f", "parquet")
    assert no_out.exit_code != 0 and "--output" in no_out.output
    bad = invoke(cli_env, "datasets", "export", "qa", "-f", "csv", "-o", str(tmp_path / "x"))
    assert bad.exit_code != 0 and "jsonl, parquet, hf" in bad.output
    assert not (tmp_path / "x").exists()
