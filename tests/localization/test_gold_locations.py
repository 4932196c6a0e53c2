"""``derive_gold_locations`` / ``benchbook localization gold`` (issue 29): the gold Benchbook
derives from a case's patch (base tree from the mirror) or from a patch file."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from benchbook.errors import InvalidInput
from benchbook.services.gold_locations import derive_gold_locations
from tests.cli.conftest import cli_env, invoke
from tests.localization.conftest import ContextBenchRun

__all__ = ["cli_env"]
PATCH = "--- a/m.py\n+++ b/m.py\n@@ -3,0 +4,2 @@\n+    def h(self):\n+        return 3\n"
XARRAY = "SWE-Bench-Verified__python__maintenance__bugfix__90532e38"


def test_gold_of_a_patch_file_as_text_and_json(cli_env: dict[str, str], tmp_path: Path) -> None:
    patch = tmp_path / "fix.diff"
    patch.write_text(PATCH)
    text = invoke(cli_env, "localization", "gold", "--patch", str(patch))
    assert text.exit_code == 0, text.output
    assert "m.py (modified, file level)" in text.stdout
    assert "inserted after 3" in text.stdout and "added 4-5 (patched)" in text.stdout
    as_json = invoke(cli_env, "localization", "gold", "--patch", str(patch), "--json")
    out = orjson.loads(as_json.stdout)
    assert out["base"] is None and out["files"][0]["inserted"] == [[3, 3]]
    assert out["spans"] == [{"file": "m.py", "start_line": 3, "end_line": 3}]


def test_a_bad_hunk_or_a_missing_argument_is_an_error(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    patch = tmp_path / "bad.diff"
    patch.write_text(PATCH.replace("+4,2", "+4,1"))
    result = invoke(cli_env, "localization", "gold", "--patch", str(patch))
    assert result.exit_code == 1 and "'@@ -3,0 +4,1 @@'" in result.stderr
    assert invoke(cli_env, "localization", "gold").exit_code == 1
    assert invoke(cli_env, "localization", "gold", "no-slash").exit_code == 1


def test_gold_of_a_case_reads_the_base_tree_from_the_mirror(cb_run: ContextBenchRun) -> None:
    out = derive_gold_locations(cb_run.ctx, "contextbench", XARRAY)
    assert out.base == "mirror" and out.warnings == []
    weighted = next(f for f in out.files if f.path == "xarray/core/weighted.py")
    assert [s.id for s in weighted.symbols] == ["xarray/core/weighted.py:Weighted._sum_of_weights"]
    assert out.spans[0]["file"] == "xarray/core/weighted.py"  # its gold_context
    with pytest.raises(InvalidInput):
        derive_gold_locations(cb_run.ctx, "contextbench", XARRAY, patch=PATCH)


def test_the_cli_shows_a_cases_gold_with_its_changed_definitions(
    cb_run: ContextBenchRun, cli_env: dict[str, str]
) -> None:
    result = invoke(cli_env, "localization", "gold", f"contextbench/{XARRAY}")
    assert result.exit_code == 0, result.output
    assert "xarray/core/weighted.py (modified)" in result.stdout
    assert "modified xarray/core/weighted.py:Weighted._sum_of_weights" in result.stdout
    assert "scored spans (base):" in result.stdout


@pytest.mark.parametrize("blank", ["", " \n\t"])
def test_a_blank_patch_is_invalid_input_not_a_server_error(
    cb_run: ContextBenchRun, blank: str
) -> None:
    # Was a ValueError from gold_spans (a 500 over HTTP, found by schemathesis).
    with pytest.raises(InvalidInput, match="patch: empty"):
        derive_gold_locations(cb_run.ctx, patch=blank)


def test_text_that_is_not_a_diff_is_refused(cli_env: dict[str, str], tmp_path: Path) -> None:
    patch = tmp_path / "g.diff"
    patch.write_text("hello world\n")
    result = invoke(cli_env, "localization", "gold", "--patch", str(patch))
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith(
        "error invalid_input: patch: not a unified diff: no file header (---/+++) found"
    )


def test_a_base_commit_missing_from_a_shallow_mirror_falls_back_to_lines(
    cb_run: ContextBenchRun,
) -> None:
    from benchbook.contracts.dataset import Dataset
    from benchbook.services import datasets as ds
    from benchbook.services.datasets import get_case

    case = get_case(cb_run.ctx, "contextbench", "latest", XARRAY)
    missing = "0123456789abcdef0123456789abcdef01234567"
    source = case.env.source.model_copy(update={"ref": missing})  # type: ignore[union-attr]
    env = case.env.model_copy(update={"source": source})
    ds.register_dataset(
        cb_run.ctx,
        Dataset(id="shallow", version="1.0.0", cases=[case.model_copy(update={"env": env})]),
    )
    out = derive_gold_locations(cb_run.ctx, "shallow", XARRAY)
    assert out.base is None
    assert out.warnings == [
        f"commit {missing} is not in the mirror of pydata/xarray (a shallow mirror?): lines "
        "only, no definitions (benchbook mirrors add a source holding it)"
    ]
    weighted = next(f for f in out.files if f.path == "xarray/core/weighted.py")
    assert weighted.symbols == [] and weighted.removed + weighted.added
