"""How ``benchbook`` fails: one clear line (or a JSON envelope with ``--json``), exit 1, no
tracebacks, nothing half-written; numeric options are validated like the API validates them."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.cli.conftest import invoke, write_dataset


@pytest.fixture
def qa(cli_env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """``qa@1.0.0`` (one case) registered; the CLI environment."""
    assert invoke(cli_env, "register", write_dataset(tmp_path, "qa.json")).exit_code == 0
    return cli_env


@pytest.mark.parametrize("where", ["missing/dir/x.jsonl", "."])
def test_exporting_to_an_unwritable_path_is_one_line_and_leaves_no_file(
    qa: dict[str, str], tmp_path: Path, where: str
) -> None:
    folder = tmp_path / "out"
    folder.mkdir()
    target = folder / where
    result = invoke(qa, "datasets", "export", "qa", "-o", str(target))
    assert result.exit_code == 1
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    assert result.stderr.startswith("error invalid_input: cannot write ")
    assert len(result.stderr.splitlines()) == 1
    assert list(folder.iterdir()) == []


def test_a_failed_export_keeps_the_previous_file_and_a_good_one_replaces_it(
    qa: dict[str, str], tmp_path: Path
) -> None:
    folder = tmp_path / "out"
    folder.mkdir()
    target = folder / "qa.jsonl"
    target.write_text("old\n")
    result = invoke(qa, "datasets", "export", "nosuch", "-o", str(target))
    assert result.exit_code == 1 and "not_found" in result.stderr
    assert target.read_text() == "old\n"
    assert list(folder.iterdir()) == [target]
    assert invoke(qa, "datasets", "export", "qa", "-o", str(target)).exit_code == 0
    assert orjson.loads(target.read_bytes())["id"] == "c1"
    assert list(folder.iterdir()) == [target]


@pytest.mark.parametrize(
    "args",
    [
        ("import", "gsm8k", "--limit", "0"),
        ("preview", "gsm8k", "--limit", "0"),
        ("preview", "gsm8k", "--limit", "21"),
        ("datasets", "show", "qa", "--limit", "0"),
        ("datasets", "show", "qa", "--limit", "1001"),
        ("datasets", "show", "qa", "--after", "-5"),
        ("datasets", "list", "--limit", "0"),
        ("datasets", "list", "--offset", "-1"),
        ("datasets", "diff", "qa", "1.0.0", "--show", "-1"),
        ("serve", "--port", "70000"),
    ],
)
def test_out_of_range_numeric_options_are_refused_before_anything_runs(
    qa: dict[str, str], args: tuple[str, ...]
) -> None:
    result = invoke(qa, *args)
    assert result.exit_code == 2, result.output
    assert "Invalid value for" in result.output
    listing = orjson.loads(invoke(qa, "datasets", "list", "--json").stdout)
    assert listing["total"] == 1


@pytest.mark.parametrize(
    "args",
    [
        ("datasets", "delete", "qa", "latest"),
        ("datasets", "delete", "qa", "baseline"),
        ("datasets", "tag", "qa", "latest", "foo"),
    ],
)
def test_deletes_and_tag_writes_by_tag_or_latest_say_an_exact_version_is_needed(
    qa: dict[str, str], args: tuple[str, ...]
) -> None:
    result = invoke(qa, *args)
    assert result.exit_code == 1
    assert result.stderr.startswith("error not_found: ")
    assert "exact SemVer version" in result.stderr


def test_with_json_an_error_is_the_envelope_on_stdout(qa: dict[str, str]) -> None:
    result = invoke(qa, "datasets", "show", "nosuch", "--json")
    assert result.exit_code == 1
    assert orjson.loads(result.stdout) == {
        "code": "not_found",
        "message": "dataset 'nosuch' not found",
        "details": {"id": "nosuch"},
    }
    assert result.stderr == ""
    bad = invoke(qa, "workspaces", "create", "bad ws/", "--json")
    assert bad.exit_code == 1
    envelope = orjson.loads(bad.stdout)
    assert envelope["code"] == "invalid_input" and "[a-z0-9_-]" in envelope["message"]
    assert envelope["details"]["errors"][0]["path"] == "workspace"


def test_delete_refuses_versions_together_with_all(qa: dict[str, str]) -> None:
    result = invoke(qa, "datasets", "delete", "qa", "1.0.0", "--all")
    assert result.exit_code == 1
    assert "either" in result.stderr and "--all" in result.stderr
    assert orjson.loads(invoke(qa, "datasets", "list", "--json").stdout)["total"] == 1


def test_importing_changed_rows_into_an_existing_version_hints_at_bump(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    spec = tmp_path / "recipe.json"
    spec.write_bytes(
        orjson.dumps({"id": "rows", "source": {"kind": "file"}, "mapping": {"task_field": "q"}})
    )
    data = tmp_path / "rows.jsonl"
    data.write_text('{"q": "one"}\n')
    args = ("import", "--spec", str(spec), "--file", str(data), "--version", "1.0.0")
    assert invoke(cli_env, *args).exit_code == 0
    data.write_text('{"q": "two"}\n')
    result = invoke(cli_env, *args)
    assert result.exit_code == 1
    assert "already exists with different content" in result.stderr
    assert "--bump patch|minor|major" in result.stderr
    as_json = orjson.loads(invoke(cli_env, *args, "--json").stdout)
    assert as_json["code"] == "conflict"
    assert as_json["details"] == {
        "id": "rows",
        "version": "1.0.0",
        "cases": {"added": 0, "removed": 0, "changed": 1},
        "meta": ["produced_by"],  # the file's sha256
    }


@pytest.mark.parametrize(
    ("variable", "value", "said"),
    [
        ("BENCHBOOK_SANDBOX", "maybe", "BENCHBOOK_SANDBOX: Input should be a valid boolean"),
        ("BENCHBOOK_IMPORT_MAX_ROWS", "0", "BENCHBOOK_IMPORT_MAX_ROWS: Input should be greater"),
    ],
)
def test_a_bad_setting_is_one_line_naming_the_variable_and_exit_2(
    cli_env: dict[str, str], variable: str, value: str, said: str
) -> None:
    result = invoke({**cli_env, variable: value}, "datasets", "list")
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert result.stderr.startswith(f"error invalid_input: {said}"), result.stderr
    assert f"(got '{value}')" in result.stderr
    assert len(result.stderr.splitlines()) == 1


def test_an_import_over_the_row_limit_says_it_once(cli_env: dict[str, str], tmp_path: Path) -> None:
    rows = tmp_path / "gsm8k.jsonl"
    rows.write_text(
        "".join(
            orjson.dumps({"question": f"q{i}?", "answer": f"so #### {i}"}).decode() + "\n"
            for i in range(3)
        )
    )
    result = invoke(
        {**cli_env, "BENCHBOOK_IMPORT_MAX_ROWS": "2"}, "import", "gsm8k", "--file", str(rows)
    )
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith("error payload_too_large: "), result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


@pytest.mark.parametrize(
    ("command", "what"), [("import-inspect", "file"), ("import-lm-eval", "file or folder")]
)
def test_importing_a_missing_log_path_is_one_not_found_line_naming_it(
    qa: dict[str, str], tmp_path: Path, command: str, what: str
) -> None:
    missing = tmp_path / "nonexistent.eval"
    result = invoke(qa, "runs", command, str(missing), "--dataset", "qa@1.0.0")
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.stderr == f"error not_found: {missing}: no such {what}\n"
    as_json = orjson.loads(invoke(qa, "runs", command, str(missing), "-d", "qa", "--json").stdout)
    assert as_json["code"] == "not_found"


def test_a_folder_given_to_import_inspect_is_one_line_naming_it(
    qa: dict[str, str], tmp_path: Path
) -> None:
    result = invoke(qa, "runs", "import-inspect", str(tmp_path), "--dataset", "qa@1.0.0")
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.stderr.startswith(f"error conflict: {tmp_path}: is a folder, not an Inspect log")


def test_an_lm_eval_folder_without_samples_says_so(qa: dict[str, str], tmp_path: Path) -> None:
    result = invoke(qa, "runs", "import-lm-eval", str(tmp_path), "--dataset", "qa@1.0.0")
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith(f"error conflict: {tmp_path.name}: no samples_<task>_")


@pytest.mark.parametrize(
    ("name", "content", "said"),
    [
        ("nope.jsonl", None, "error not_found: {path}: file not found"),
        ("empty.jsonl", "", "error conflict: empty.jsonl has no rows; nothing imported"),
        (
            "broken.jsonl",
            '{"question": "q?", "answer": "#### 1"}\n{"question": }\n',
            "error conflict: broken.jsonl line 2, column 14: not valid JSON: unexpected character",
        ),
    ],
)
@pytest.mark.parametrize("bump", [(), ("--bump", "minor")])
def test_a_failed_import_says_what_was_wrong_once_without_the_bump_hint(
    cli_env: dict[str, str],
    tmp_path: Path,
    name: str,
    content: str | None,
    said: str,
    bump: tuple[str, ...],
) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_text(content)
    result = invoke(cli_env, "import", "gsm8k", "--file", str(path), *bump)
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith(said.format(path=path)), result.stderr
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert "--bump" not in result.stderr
    code = said.split()[1].rstrip(":")
    as_json = orjson.loads(invoke(cli_env, "import", "gsm8k", "--file", str(path), "--json").stdout)
    assert as_json["code"] == code and "--bump" not in as_json["message"]
