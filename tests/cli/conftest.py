"""CLI fixtures: the environment ``benchbook`` runs in, and a runner that returns the result."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import Result
from sqlalchemy import Engine
from typer.testing import CliRunner

from benchbook.cli import app
from benchbook.settings import get_settings


@pytest.fixture
def cli_env(engine: Engine, database_url: str, tmp_path: Path) -> Iterator[dict[str, str]]:
    """A temporary BENCHBOOK_HOME and the test database (cleared by ``engine``); 80 columns."""
    get_settings.cache_clear()
    yield {
        "BENCHBOOK_HOME": str(tmp_path / "home"),
        "DATABASE_URL": database_url,
        "COLUMNS": "80",
    }
    get_settings.cache_clear()


def invoke(env: dict[str, str], *args: str) -> Result:
    """Run ``benchbook ARGS`` in ``env``; the result keeps stdout and stderr apart."""
    get_settings.cache_clear()
    return CliRunner().invoke(app, list(args), env=env)


def write_dataset(folder: Path, name: str, **fields: Any) -> str:
    """Write a dataset JSON file (``id`` qa, version 1.0.0, one case unless given); its path."""
    body: dict[str, Any] = {
        "id": "qa",
        "version": "1.0.0",
        "cases": [{"id": "c1", "env": {"kind": "prompt"}, "task": "What is 2+2?", "expected": "4"}],
    }
    body.update(fields)
    path = folder / name
    path.write_bytes(orjson.dumps(body))
    return str(path)
