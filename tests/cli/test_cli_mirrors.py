"""``benchbook mirrors add | list`` (issue 12 item 4)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.conftest import invoke


def test_mirrors_add_then_list_as_table_and_json(
    cli_env: dict[str, str], shared_data: Path
) -> None:
    (bundle,) = (shared_data / "contextbench" / "repos").glob("jqlang__jq@*.bundle")
    added = invoke(cli_env, "mirrors", "add", "jqlang/jq", str(bundle))
    assert added.exit_code == 0, added.output
    assert (
        "created mirror https://github.com/jqlang/jq.git (1 commit, 1 ref, shallow" in added.stdout
    )
    again = invoke(cli_env, "mirrors", "add", "jqlang/jq", str(bundle))
    assert again.exit_code == 0 and again.stdout.startswith("updated mirror")
    table = invoke(cli_env, "mirrors", "list")
    assert table.exit_code == 0 and "jqlang/jq" in table.stdout and "github.com" in table.stdout
    (item,) = json.loads(invoke(cli_env, "mirrors", "list", "--json").stdout)
    assert (item["repo"], item["host"], item["commits"], item["refs"]) == (
        "jqlang/jq",
        "github.com",
        1,
        1,
    )
    assert item["path"].endswith("/mirrors/github.com/jqlang/jq.git") and item["size_bytes"] > 0


def test_a_bad_name_is_a_one_line_error(cli_env: dict[str, str], tmp_path: Path) -> None:
    done = invoke(cli_env, "mirrors", "add", "../../etc", str(tmp_path))
    assert done.exit_code == 1
    assert "error invalid_input: repository '../../etc' is not owner/name" in done.stderr
