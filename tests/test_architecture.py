"""The layering the import-linter contracts promise (issue 9 item 7: transports independent)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import tomllib
from pathlib import Path

from sqlalchemy import Engine

from benchbook.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "benchbook"
TRANSPORTS = ("api", "mcp", "web", "cli")


def _imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_no_transport_imports_another_transport() -> None:
    crossings = []
    for transport in TRANSPORTS:
        for path in sorted((SRC / transport).rglob("*.py")):
            for name in _imported_modules(path):
                parts = name.split(".")
                crossing = len(parts) > 1 and parts[1] in TRANSPORTS and parts[1] != transport
                if parts[0] == "benchbook" and crossing:
                    crossings.append(f"{path.relative_to(SRC)} imports {name}")
    assert crossings == []


def test_an_independence_contract_covers_the_four_transports() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    independence = [c for c in contracts if c["type"] == "independence"]
    assert [sorted(c["modules"]) for c in independence] == [
        sorted(f"benchbook.{t}" for t in TRANSPORTS)
    ]
    # Only the launcher may reach the composed app, and nothing else is exempt.
    assert independence[0].get("ignore_imports") == ["benchbook.cli.server -> benchbook.app"]


def test_the_import_contracts_are_kept() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    code = "import sys; from importlinter.cli import lint_imports_command as c; sys.exit(c())"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout[-3000:]
    assert "transports are independent of each other" in done.stdout


def test_the_app_composed_above_the_transports_serves_all_three(
    engine: Engine, settings: Settings
) -> None:
    """``engine`` empties the database first: with users left by an earlier test on the same
    PostgreSQL database, MCP answers 401 instead (order-dependent, seen under xdist)."""
    from fastapi.testclient import TestClient

    from benchbook.app import create_app

    with TestClient(create_app(settings)) as client:
        assert client.get("/api/health").json()["status"] == "ok"
        assert client.get("/login").status_code == 200
        assert client.post("/mcp", json={}).status_code in {400, 406}  # served: not JSON-RPC
