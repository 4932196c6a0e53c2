"""Issue 14 item 12: tables wrap (a long word folds onto the next line, never cut with an
ellipsis) and every command that prints takes ``--json``."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import typer

from benchbook.cli.app import COMMANDS, app
from tests.cli.conftest import invoke, write_dataset

#: Commands that serve instead of printing a result.
SERVERS = {"serve", "worker", "mcp"}

LONG_TAG = "averyveryverylongtagwithoutanyspaces0123456789"
LONG_ID = "a-dataset-id-that-is-long-enough-to-wrap-0123456789"


def column(out: str, index: int) -> str:
    """The text of table column ``index`` (0-based) over every body line, joined."""
    parts = []
    for line in out.splitlines():
        if line.startswith("│"):
            parts.append(line.split("│")[index + 1].strip())
    return "".join(parts)


def _leaf_commands() -> list[tuple[str, Any]]:
    for entry in {c.module for c in COMMANDS.values()}:
        importlib.import_module(entry)
    found: list[tuple[str, Any]] = []

    def walk(cmd: Any, path: list[str]) -> None:
        if hasattr(cmd, "commands"):
            for name, sub in cmd.commands.items():
                walk(sub, [*path, name])
        else:
            found.append((" ".join(path), cmd))

    for name, cmd in typer.main.get_group(app).commands.items():
        walk(cmd, [name])
    return found


def test_every_command_that_prints_takes_json() -> None:
    commands = _leaf_commands()
    assert {"migrate", "datasets export", "runs scorecard"} <= {name for name, _ in commands}
    missing = [
        name
        for name, cmd in commands
        if name not in SERVERS and "--json" not in {o for p in cmd.params for o in p.opts}
    ]
    assert missing == []


def test_a_long_tag_and_id_fold_at_40_columns_instead_of_ending_in_an_ellipsis(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    path = write_dataset(tmp_path, "qa.json", id=LONG_ID, tags=[LONG_TAG])
    assert invoke(cli_env, "register", path).exit_code == 0
    # A real process, as a user runs it: the in-process runner keeps the console (and its
    # width) that an earlier command of the same test process made.
    narrow = {**os.environ, **cli_env, "COLUMNS": "40"}
    benchbook = Path(sys.executable).parent / "benchbook"
    result = subprocess.run(
        [str(benchbook), "datasets", "list"], env=narrow, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert "…" not in result.stdout
    assert max(map(len, result.stdout.splitlines())) <= 40
    assert column(result.stdout, 0) == LONG_ID
    assert column(result.stdout, 5) == LONG_TAG


def test_datasets_show_shortens_a_long_task_at_a_word_and_keeps_ids_whole(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    task = "Compute the total " + " ".join(f"word{i}" for i in range(40))
    cases = [{"id": LONG_ID, "env": {"kind": "prompt"}, "task": task, "expected": "4"}]
    path = write_dataset(tmp_path, "qa.json", cases=cases)
    assert invoke(cli_env, "register", path).exit_code == 0
    result = invoke(cli_env, "datasets", "show", "qa")
    assert result.exit_code == 0, result.output
    assert column(result.stdout, 0) == LONG_ID
    shown = " ".join(
        line.split("│")[3].strip() for line in result.stdout.splitlines() if line.startswith("│")
    )
    words = shown.removesuffix(" …").split()
    assert shown.endswith(" …") and words == task.split()[: len(words)]


def test_migrate_json_names_the_database(cli_env: dict[str, str]) -> None:
    result = invoke(cli_env, "migrate", "--json")
    assert result.exit_code == 0, result.output
    body = orjson.loads(result.stdout)
    assert body == {"database_url": body["database_url"], "at_head": True}
    assert body["database_url"] == cli_env["DATABASE_URL"]


def test_datasets_export_json_says_what_it_wrote(cli_env: dict[str, str], tmp_path: Path) -> None:
    assert invoke(cli_env, "register", write_dataset(tmp_path, "qa.json")).exit_code == 0
    target = tmp_path / "out.jsonl"
    result = invoke(cli_env, "datasets", "export", "qa", "-o", str(target), "--json")
    assert result.exit_code == 0, result.output
    assert orjson.loads(result.stdout) == {
        "id": "qa",
        "version": "1.0.0",
        "format": "jsonl",
        "path": str(target),
        "cases": 1,
        "size_bytes": target.stat().st_size,
    }
    folder = tmp_path / "hf"
    hf = invoke(cli_env, "datasets", "export", "qa", "-f", "hf", "-o", str(folder), "--json")
    assert hf.exit_code == 0, hf.output
    assert orjson.loads(hf.stdout)["cases"] == 1 and (folder / "README.md").exists()


def test_compare_json_is_format_json(cli_env: dict[str, str]) -> None:
    result = invoke(cli_env, "compare", "sc_nope", "sc_nope2", "--json")
    assert result.exit_code == 2
    assert orjson.loads(result.stdout)["code"] == "not_found"
