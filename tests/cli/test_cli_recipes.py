"""``benchbook recipes register | validate | list | show`` through CliRunner, on both backends."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from sqlalchemy import Engine

from benchbook.settings import get_settings
from tests.cli.test_cli_imports import _run
from tests.services.test_recipes import body


@pytest.fixture
def env(engine: Engine, database_url: str, tmp_path: Path) -> Iterator[dict[str, str]]:
    """Environment for the CLI: a temporary home and the test database (cleared by ``engine``)."""
    get_settings.cache_clear()
    yield {"BENCHBOOK_HOME": str(tmp_path / "home"), "DATABASE_URL": database_url}
    get_settings.cache_clear()


def _write(tmp_path: Path, name: str, payload: object) -> str:
    path = tmp_path / name
    path.write_bytes(orjson.dumps(payload))
    return str(path)


def test_register_list_show_and_validate_a_recipe(env: dict[str, str], tmp_path: Path) -> None:
    first = _write(tmp_path, "r1.json", body("1.0.0"))
    newer = _write(tmp_path, "r2.json", body("1.1.0", description="Newer sums"))
    assert _run(env, "recipes", "register", first) == (
        0,
        "registered recipe arith@1.0.0 in default\n",
    )
    code, out = _run(env, "recipes", "register", first)
    assert code == 0 and out.startswith("unchanged recipe arith@1.0.0")
    assert _run(env, "recipes", "register", newer)[0] == 0
    code, out = _run(env, "recipes", "list", "--json")
    listed = orjson.loads(out)
    assert code == 0 and [(r["id"], r["latest"]) for r in listed] == [("arith", "1.1.0")]
    code, out = _run(env, "recipes", "show", "arith", "--json")
    assert code == 0 and orjson.loads(out)["description"] == "Newer sums"
    code, out = _run(env, "recipes", "show", "arith", "1.0.0", "--json")
    assert code == 0 and orjson.loads(out)["version"] == "1.0.0"
    clash = _write(tmp_path, "r3.json", body("1.0.0", description="changed"))
    code, out = _run(env, "recipes", "validate", clash)
    assert code == 1 and "exists with different content" in out
    code, out = _run(env, "recipes", "register", clash)
    assert code == 1 and "arith@1.0.0" in out


def test_a_javascript_origin_link_is_refused_and_nothing_is_stored(
    env: dict[str, str], tmp_path: Path
) -> None:
    bad = _write(tmp_path, "bad.json", body(origin={"homepage": "javascript:alert(1)"}))
    code, out = _run(env, "recipes", "register", bad)
    assert code == 1 and "origin.homepage" in out
    assert _run(env, "recipes", "list", "--json") == (0, "[]\n")
    code, out = _run(env, "recipes", "show", "arith")
    assert code == 1 and "not found" in out


def test_import_and_preview_take_a_registered_recipe_with_or_without_its_version(
    env: dict[str, str], tmp_path: Path
) -> None:
    assert _run(env, "recipes", "register", _write(tmp_path, "r1.json", body("1.0.0")))[0] == 0
    newer = body("1.1.0", mapping={"id_field": "id", "task_field": "question"})
    assert _run(env, "recipes", "register", _write(tmp_path, "r2.json", newer))[0] == 0
    rows = tmp_path / "sums.jsonl"
    rows.write_text('{"id": "a", "question": "1+1", "answer": "2"}\n')
    code, out = _run(env, "preview", "--recipe", "arith@1.0.0", "--file", str(rows), "--json")
    assert code == 0 and orjson.loads(out)["cases"][0]["task"] == "Q: 1+1"
    code, out = _run(env, "import", "--recipe", "arith@1.0.0", "--file", str(rows), "--json")
    made = orjson.loads(out)
    assert code == 0 and (made["id"], made["version"], made["cases"]) == ("arith", "1.0.0", 1)
    code, out = _run(env, "import", "--recipe", "arith", "--id", "latest-arith", "-f", str(rows))
    assert code == 0 and out == "registered latest-arith@1.0.0 (1 case)\n"
    code, out = _run(env, "datasets", "show", "latest-arith", "--json")
    assert orjson.loads(out)["cases"][0]["task"] == "1+1"  # 1.1.0's mapping: the latest
    code, _ = _run(env, "import", "gsm8k", "--recipe", "arith", "-f", str(rows))
    assert code == 1
