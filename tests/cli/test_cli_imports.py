"""``benchbook import | preview | benchmarks`` through typer's CliRunner, on both backends."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from sqlalchemy import Engine
from typer.testing import CliRunner

from benchbook.cli import app
from benchbook.settings import get_settings

pytestmark = pytest.mark.both_backends

runner = CliRunner()


@pytest.fixture
def env(engine: Engine, database_url: str, tmp_path: Path) -> Iterator[dict[str, str]]:
    """Environment for the CLI: a temporary home and the test database (cleared by ``engine``)."""
    get_settings.cache_clear()
    yield {"BENCHBOOK_HOME": str(tmp_path / "home"), "DATABASE_URL": database_url}
    get_settings.cache_clear()


def _run(env: dict[str, str], *args: str) -> tuple[int, str]:
    get_settings.cache_clear()
    result = runner.invoke(app, list(args), env=env)
    return result.exit_code, result.output


def test_import_gsm8k_registers_then_reports_unchanged_then_bumps(
    env: dict[str, str], shared_data: Path
) -> None:
    test_file = str(shared_data / "gsm8k" / "test.jsonl")
    code, out = _run(env, "import", "gsm8k", "--file", test_file)
    assert code == 0, out
    assert "registered gsm8k@1.0.0 (1,319 cases)" in out
    code, out = _run(env, "import", "gsm8k", "--file", test_file)
    assert code == 0 and "unchanged gsm8k@1.0.0 (1,319 cases)" in out
    train = str(shared_data / "gsm8k" / "train.first300.jsonl")
    code, out = _run(env, "import", "gsm8k", "--file", train, "--bump", "minor", "--json")
    assert code == 0, out
    assert orjson.loads(out)["version"] == "1.1.0"
    code, out = _run(env, "datasets", "diff", "gsm8k", "1.0.0", "1.1.0", "--json")
    assert code == 0, out
    summary = orjson.loads(out)["summary"]
    assert (summary["changed"], summary["removed"], summary["added"]) == (300, 1019, 0)


def test_import_osworld_from_a_folder(env: dict[str, str], shared_data: Path) -> None:
    code, out = _run(env, "import", "osworld", "--file", str(shared_data / "osworld/examples"))
    assert code == 0, out
    assert "registered osworld@1.0.0 (369 cases)" in out


def test_a_bad_spec_exits_non_zero_naming_the_place(env: dict[str, str], tmp_path: Path) -> None:
    spec = tmp_path / "recipe.json"
    spec.write_bytes(
        orjson.dumps(
            {
                "id": "mini",
                "origin": {"homepage": "javascript:alert(1)"},
                "source": {"kind": "file"},
                "mapping": {"task_field": "q"},
            }
        )
    )
    data = tmp_path / "rows.jsonl"
    data.write_text('{"q": "x"}\n')
    code, out = _run(env, "import", "--spec", str(spec), "--file", str(data))
    assert code == 1
    assert "spec.origin.homepage" in out
    code, out = _run(env, "datasets", "list", "--json")
    assert code == 0 and orjson.loads(out)["total"] == 0


def test_a_spec_with_a_malformed_csv_row_stores_nothing(
    env: dict[str, str], tmp_path: Path
) -> None:
    spec = tmp_path / "recipe.json"
    spec.write_bytes(
        orjson.dumps({"id": "mini", "source": {"kind": "file"}, "mapping": {"task_field": "q"}})
    )
    data = tmp_path / "rows.csv"
    data.write_text("q,a\nx,1\ny\n")
    code, out = _run(env, "import", "--spec", str(spec), "--file", str(data))
    assert code == 1 and "line 3" in out
    code, out = _run(env, "datasets", "list", "--json")
    assert orjson.loads(out)["total"] == 0


def test_preview_prints_the_assertion(env: dict[str, str], shared_data: Path) -> None:
    path = str(shared_data / "webvoyager" / "WebVoyager_data.jsonl")
    code, out = _run(env, "preview", "webvoyager", "--file", path, "--json")
    assert code == 0, out
    result = orjson.loads(out)
    assert result["assertion"].startswith("The agent works in a browser starting at `web`")
    assert result["cases"][0]["env"]["start_url"] == "https://www.allrecipes.com/"


def test_benchmarks_list_and_show(env: dict[str, str]) -> None:
    code, out = _run(env, "benchmarks", "list", "--json")
    assert code == 0
    rows = {b["id"]: b for b in orjson.loads(out)}
    assert rows["trek"]["scoring"]["kind"] == "proxy"
    assert rows["gsm8k"]["license"] == "MIT"
    code, out = _run(env, "benchmarks", "show", "gsm8k")
    assert code == 0 and "https://arxiv.org/abs/2110.14168" in out
    code, out = _run(env, "benchmarks", "show", "nope")
    assert code == 1 and "not in the catalog" in out


def test_import_contextbench_prints_the_load_report_and_keeps_gold_from_the_task(
    env: dict[str, str], shared_data: Path, tmp_path: Path
) -> None:
    release = str(shared_data / "contextbench" / "contextbench_verified_test.parquet")
    get_settings.cache_clear()
    result = runner.invoke(app, ["import", "contextbench", "--file", release], env=env)
    assert result.exit_code == 0, result.output
    assert "registered contextbench@1.0.0 (50 cases)" in result.stdout
    assert "gold spans: 391 read, 2 exact duplicates dropped" in result.stderr
    assert "dotfiles kept: .size-limit.js" in result.stderr
    assert "outside any checkout prefix: run_svelte_test.js, CustomJsonNodeTest.java" in (
        result.stderr
    )
    out = tmp_path / "cb.jsonl"
    code, output = _run(env, "datasets", "export", "contextbench", "-o", str(out))
    assert code == 0, output
    cases = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    for case in cases:
        assert {"gold_context", "patch", "test_patch", "f2p", "p2p"} <= set(case["gold_fields"])
        assert case["metadata"]["patch"] not in case["task"]
    jq = next(c for c in cases if c["metadata"]["original_inst_id"] == "jqlang__jq-2654")
    assert jq["env"]["source"]["git"] == "https://github.com/jqlang/jq.git"
    assert [s["file"] for s in jq["metadata"]["gold_context"]] == ["src/main.c"] * 3
