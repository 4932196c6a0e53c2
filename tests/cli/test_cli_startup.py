"""Start-up: ``--version``, the lazy command table behind ``--help``, and what they import.

Speed itself is measured in ``bench/startup.py``; these tests check the structure that makes it
fast (no heavy import for ``--help``/``--version``) and that the lazy table matches the modules.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

import benchbook
from benchbook.cli import app
from benchbook.cli.app import COMMANDS

HEAVY = ("sqlalchemy", "alembic", "fastapi", "huggingface_hub", "datasets", "rich", "pydantic")

PROBE = """
import sys
from benchbook.cli import app
try:
    app(sys.argv[1:], prog_name="benchbook")
except SystemExit:
    pass
print("MODULES", " ".join(sorted(sys.modules)))
"""


def test_version_prints_the_package_version() -> None:
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.stdout == f"benchbook {importlib.metadata.version('benchbook')}\n"
    assert benchbook.__version__ == importlib.metadata.version("benchbook")


@pytest.mark.parametrize("flag", ["--help", "--version"])
def test_help_and_version_import_no_heavy_module(flag: str) -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, flag], capture_output=True, text=True, check=True
    ).stdout
    modules = set(out.rsplit("MODULES ", 1)[1].split())
    assert {m for m in modules if m.split(".")[0] in HEAVY} == set()
    loaded = {m for m in modules if m.startswith("benchbook.")}
    assert loaded == {"benchbook.cli", "benchbook.cli.app", "benchbook.errors"}


def test_help_lists_every_command_with_its_help_line() -> None:
    result = CliRunner().invoke(app, ["--help"])
    assert result.exit_code == 0
    listed: list[list[str]] = []
    for line in result.stdout.split("Commands:\n", 1)[1].splitlines():
        if line.startswith("  ") and not line.startswith("   "):
            listed.append(line.split(None, 1))
        elif line.strip():  # a wrapped help line ("write-" + "only" joins without a space)
            joint = "" if listed[-1][1].endswith("-") else " "
            listed[-1][1] += joint + line.strip()
    assert listed == [[name, entry.help] for name, entry in COMMANDS.items()]


def test_benchbook_alone_prints_the_help_and_exits_2() -> None:
    bare, helped = CliRunner().invoke(app, []), CliRunner().invoke(app, ["--help"])
    assert bare.exit_code == 2
    assert bare.stdout == helped.stdout
    assert "Commands:" in bare.stdout


def test_the_lazy_table_matches_the_command_modules() -> None:
    """Every module's registrations, loaded eagerly, equal COMMANDS: names, help, module."""
    for module in {entry.module for entry in COMMANDS.values()}:
        importlib.import_module(module)
    registered = typer.main.get_group(app).commands
    assert sorted(registered) == sorted(COMMANDS)
    groups = {info.name or info.typer_instance.info.name: info for info in app.registered_groups}
    for name, command in registered.items():
        first_paragraph = inspect.cleandoc(command.help or "").split("\n\n")[0]
        assert " ".join(first_paragraph.split()) == COMMANDS[name].help, name
        module = importlib.import_module(COMMANDS[name].module)
        if getattr(command, "commands", None):
            # A group's sub-commands may be built elsewhere (cli.registered builds the
            # registered nouns'); the module named must hold the group it registers.
            group = groups[name].typer_instance
            assert any(value is group for value in vars(module).values()), name
        else:
            assert command.callback is not None
            assert inspect.unwrap(command.callback).__module__ == module.__name__, name


def _probe(home: Path, *args: str) -> tuple[str, str]:
    """``benchbook ARGS`` in a fresh process (PROBE) on ``home``: (its output, its modules)."""
    env = {**os.environ, "BENCHBOOK_HOME": str(home), "DATABASE_URL": ""}
    out = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, check=True, env=env
    ).stdout
    listing, modules = out.rsplit("MODULES ", 1)
    return listing, modules


def test_a_command_runs_when_resolved_lazily(tmp_path: Path) -> None:
    """A fresh process resolves ``benchbook benchmarks list`` by importing only what it needs."""
    listing, modules = _probe(tmp_path, "benchmarks", "list", "--json")
    assert '"gsm8k"' in listing
    assert "benchbook.cli.imports" in modules.split()
    assert "benchbook.cli.runs" not in modules.split()


def test_datasets_list_loads_no_run_module(tmp_path: Path) -> None:
    """``benchbook datasets list`` reads datasets only: the run contracts, views and scorecards
    (needed by a dataset timeline that shows runs) stay unloaded (bench/startup.py)."""
    listing, modules = _probe(tmp_path, "datasets", "list", "--json")
    assert listing.strip().startswith("[") or listing.strip().startswith("{")
    loaded = set(modules.split())
    assert "benchbook.services.datasets" in loaded
    run_modules = {
        "benchbook.contracts.run",
        "benchbook.services.run_views",
        "benchbook.store.runs",
    }
    assert loaded & run_modules == set()


#: A fresh process imports a file the way a user does and reports what it loaded and which
#: contract models it built (pydantic models are built on first use: ``contracts.common.LAZY``).
IMPORT_PROBE = """
import sys
import pydantic
from benchbook.cli import app
try:
    app(sys.argv[1:], prog_name="benchbook")
except SystemExit:
    pass
built = sorted(
    f"{c.__module__}.{c.__qualname__}"
    for m in list(sys.modules.values())
    if getattr(m, "__name__", "").startswith("benchbook.contracts")
    for c in vars(m).values()
    if isinstance(c, type) and issubclass(c, pydantic.BaseModel) and c.__pydantic_complete__
)
print("MODULES", " ".join(sorted(sys.modules)))
print("BUILT", " ".join(built))
"""


def test_a_sqlite_import_loads_no_postgresql_dialect_and_builds_only_used_models(
    tmp_path: Path,
) -> None:
    """``benchbook import`` into a migrated SQLite database: the PostgreSQL dialect (~0.06 s)
    is not imported and contract models the import never validates (pages, diffs, accounts)
    are not built. (A first run migrates with Alembic, which loads every dialect.)"""
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"question": "1+1?", "answer": "so #### 2"}\n')
    env = {**os.environ, "BENCHBOOK_HOME": str(tmp_path / "home"), "DATABASE_URL": ""}
    first = ["import", "gsm8k", "--file", str(rows), "--id", "first"]
    subprocess.run([sys.executable, "-c", PROBE, *first], capture_output=True, check=True, env=env)
    args = ["import", "gsm8k", "--file", str(rows), "--id", "probe", "--json"]
    out = subprocess.run(
        [sys.executable, "-c", IMPORT_PROBE, *args],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    ).stdout
    assert '"created": true' in out
    modules = set(out.split("MODULES ", 1)[1].split("\n", 1)[0].split())
    built = set(out.split("BUILT ", 1)[1].split())
    assert "sqlalchemy" in modules
    assert {m for m in modules if m.startswith("sqlalchemy.dialects.postgresql")} == set()
    unused = {
        "benchbook.contracts.registry.DatasetPage",
        "benchbook.contracts.registry.ActivityPage",
        "benchbook.contracts.diff.DatasetDiff",
        "benchbook.contracts.accounts.User",
    }
    assert built & unused == set()
    assert "benchbook.contracts.imports.ImportResult" in built  # used: the printed outcome


def test_run_commands_load_no_model_client(tmp_path: Path) -> None:
    """``benchbook run``/``runs`` load the graders, whose judge calls a model through ``openai``
    (~0.8 s to import, half the start-up): it is imported only when a judge asks a model."""
    env = {**os.environ, "BENCHBOOK_HOME": str(tmp_path), "DATABASE_URL": ""}
    for command in (["run", "--help"], ["runs", "list", "--json"]):
        out = subprocess.run(
            [sys.executable, "-c", PROBE, *command],
            capture_output=True,
            text=True,
            check=True,
            env=env,
        ).stdout
        modules = out.rsplit("MODULES ", 1)[1].split()
        assert "benchbook.eval.judge_prompt" in modules, command
        assert [m for m in modules if m.split(".")[0] == "openai"] == [], command


def test_json_output_imports_no_rich(tmp_path: Path) -> None:
    """``benchbook datasets list --json`` (the docs tests spawn ~300 such processes) prints
    through orjson: neither ``console`` nor ``escape`` imported by a command module loads rich."""
    env = {**os.environ, "BENCHBOOK_HOME": str(tmp_path), "DATABASE_URL": ""}
    probe = [sys.executable, "-c", PROBE, "datasets", "list", "--json"]
    subprocess.run(probe, capture_output=True, check=True, env=env)  # migrates
    out = subprocess.run(probe, capture_output=True, text=True, check=True, env=env).stdout
    listing, modules = out.rsplit("MODULES ", 1)
    assert '"items": []' in listing
    assert "benchbook.cli.datasets" in modules.split()
    assert [m for m in modules.split() if m.split(".")[0] == "rich"] == []
    plain = subprocess.run(probe[:-1], capture_output=True, text=True, check=True, env=env)
    assert "rich.console" in plain.stdout.rsplit("MODULES ", 1)[1].split()  # the table
