"""Importing Inspect AI logs through every transport (issue 31): MCP with the log inline (the
SDK's client against a real uvicorn), HTTP multipart through the Python client, a JSON body
with the log as base64, and the CLI — one service, the same run and imported scorecard."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import Engine

from benchbook.client import Client, Conflict
from benchbook.contracts.dataset import Case
from benchbook.datasets.flat import write_export
from benchbook.services import datasets as ds
from benchbook.services.context import Context
from benchbook.settings import Settings
from tests.cli.conftest import invoke
from tests.eval.test_runs import arithmetic
from tests.mcp.live import live_server, mcp_http
from tests.mcp.test_runs_end_to_end import _admin_key
from tests.services.interop_logs import inspect_log, lm_eval_output


@pytest.fixture
def server_url(engine: Engine, settings: Settings) -> Iterator[str]:
    with live_server(settings, engine) as url:
        yield url


def sums(ctx: Context) -> list[Case]:
    dataset = arithmetic("sums")
    ds.register_dataset(ctx, dataset)
    return list(dataset.cases)


def test_an_inspect_log_imports_over_mcp_http_the_client_and_the_cli(
    ctx: Context, server_url: str, tmp_path: Path, database_url: str
) -> None:
    cases = sums(ctx)
    eval_path, log = inspect_log(cases, tmp_path / "eval", "sums@1.0.0", epochs=2)
    json_path, _ = inspect_log(cases, tmp_path / "json", "sums@1.0.0", log_format="json")
    accuracy = log.results.scores[0].metrics["accuracy"].value
    assert 0 < accuracy < 1  # c0 ("What is 0+1?") is the one the last number answers
    key = _admin_key(ctx)

    with mcp_http(server_url, key) as mcp:
        request: dict[str, Any] = {"dataset": "sums@1.0.0", "text": json_path.read_text()}
        result = mcp.call("import_inspect_run", {"request": request})
        assert not result.is_error, result.content
        data = result.structured_content
        assert data is not None and data["tool"] == "inspect" and data["samples"] == 12
        encoded = base64.b64encode(eval_path.read_bytes()).decode()
        request = {"dataset": "sums@1.0.0", "content_base64": encoded}
        data = mcp.call("import_inspect_run", {"request": request}).structured_content
        assert data is not None and data["imported_scorecard"]["pass_rate"] == accuracy
        bad = mcp.call("import_inspect_run", {"request": {"dataset": "sums", "text": "{"}})
        assert bad.is_error

    with Client(server_url, key) as bb:
        imported = bb.runs.import_inspect(eval_path, "sums@1.0.0", harness="my-agent@1.0.0")
        assert imported.run.harness == "my-agent@1.0.0" and imported.samples == 24
        assert imported.imported_scorecard.pass_rate == pytest.approx(accuracy)
        assert bb.runs.scorecard(imported.run).n == 24
        cut = tmp_path / "cut.eval"
        cut.write_bytes(eval_path.read_bytes()[:2000])
        with pytest.raises(Conflict, match="truncated"):
            bb.runs.import_inspect(cut, "sums@1.0.0")

    body = {"dataset": "sums@1.0.0", "content_base64": encoded}
    answer = httpx.post(
        f"{server_url}/api/runs/import/inspect",
        json=body,
        headers={"Authorization": f"Bearer {key}"},
        timeout=60,
    )
    assert answer.status_code == 201, answer.text
    assert answer.json()["run"]["counts"]["total"] == 24

    env = {"BENCHBOOK_HOME": str(tmp_path / "home"), "DATABASE_URL": database_url}
    out = invoke(env, "runs", "import-inspect", str(eval_path), str(json_path),
                 "--dataset", "sums@1.0.0", "--json")  # fmt: skip
    assert out.exit_code == 0, out.output
    done = json.loads(out.stdout)
    assert [d["samples"] for d in done] == [24, 12]
    text = invoke(env, "runs", "import-inspect", str(json_path), "--dataset", "sums@1.0.0")
    assert text.exit_code == 0 and "imported inspect" in text.stdout
    refused = invoke(env, "runs", "import-inspect", str(cut), "--dataset", "sums@1.0.0")
    assert refused.exit_code != 0 and "truncated" in refused.output


def test_lm_eval_samples_import_over_mcp_the_client_and_the_cli(
    ctx: Context, server_url: str, tmp_path: Path, database_url: str
) -> None:
    cases = sums(ctx)
    [version] = ds.list_dataset_versions(ctx, "sums")
    write_export(cases, tmp_path / "hf", "hf", version)
    out = tmp_path / "out"
    lm_eval_output(tmp_path / "hf", "benchbook_sums_1_0_0", None, out, 12)  # --model dummy
    [samples] = out.rglob("samples_*.jsonl")
    [results] = out.rglob("results_*.json")
    key = _admin_key(ctx)
    with mcp_http(server_url, key) as mcp:
        request = {
            "dataset": "sums@1.0.0",
            "samples_text": samples.read_text(),
            "results_text": results.read_text(),
        }
        data = mcp.call("import_lm_eval_run", {"request": request}).structured_content
        assert data is not None and (data["tool"], data["samples"]) == ("lm-eval", 12)
        assert data["run"]["reproducibility"]["import"]["model"] == "dummy"
    with Client(server_url, key) as bb:
        imported = bb.runs.import_lm_eval(out, "sums@1.0.0", filter="flexible-extract")
        assert (imported.matched_by_id, imported.imported_scorecard.n) == (12, 12)
        with pytest.raises(Conflict, match="no filter 'nope'"):
            bb.runs.import_lm_eval(out, "sums@1.0.0", filter="nope")
    env = {"BENCHBOOK_HOME": str(tmp_path / "home"), "DATABASE_URL": database_url}
    args = ["runs", "import-lm-eval", str(out), "--dataset", "sums@1.0.0"]
    done = invoke(env, *args, "--filter", "flexible-extract", "--json")
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["tool"] == "lm-eval"
    shown = invoke(env, *args)
    assert shown.exit_code == 0 and "imported lm-eval" in shown.stdout
    refused = invoke(env, *args, "--task", "other")
    assert refused.exit_code != 0 and "no samples of task 'other'" in refused.output
