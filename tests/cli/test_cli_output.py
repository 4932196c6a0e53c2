"""What ``benchbook`` prints: data shown verbatim (never read as Rich markup), one outcome-line
format for every command that writes a version, ids never truncated, compact diffs."""

from __future__ import annotations

from pathlib import Path

import orjson

from tests.cli.conftest import invoke, write_dataset
from tests.services.test_recipes import body

TASK = "x = arr[i] * 2 and m[red] ok :warning:"
CASE = {"id": "c1", "env": {"kind": "prompt"}, "task": TASK, "expected": "[i]"}


def test_datasets_show_prints_brackets_in_task_expected_description_and_tags_verbatim(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    path = write_dataset(
        tmp_path, "qa.json", description="Arrays [i] and [b]", tags=["[red]t"], cases=[CASE]
    )
    assert invoke(cli_env, "register", path).exit_code == 0
    result = invoke(cli_env, "datasets", "show", "qa")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "Arrays [i] and [b]" in out
    assert "[red]t" in out
    assert "x = arr[i] * 2 and m[red] ok :warning:" in out
    assert "[i]" in out.split(":warning:")[1]


def test_closing_tags_in_data_print_instead_of_crashing(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    cases = [
        {"id": "c1", "env": {"kind": "prompt"}, "task": "close [/] here", "expected": "[/bold]"},
    ]
    path = write_dataset(tmp_path, "qa.json", cases=cases, description="[/]")
    assert invoke(cli_env, "register", path).exit_code == 0
    result = invoke(cli_env, "datasets", "show", "qa")
    assert result.exit_code == 0, result.output
    assert "close [/] here" in result.stdout and "[/bold]" in result.stdout
    listing = invoke(cli_env, "datasets", "list", "--search", "qa")
    assert listing.exit_code == 0, listing.output


def test_a_diff_and_a_versions_table_print_bracketed_ids_and_tasks_verbatim(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    first = write_dataset(tmp_path, "a.json")
    added = {"id": "[b]x", "env": {"kind": "prompt"}, "task": "[/] [i]y", "expected": "1"}
    second = write_dataset(
        tmp_path,
        "b.json",
        version="1.1.0",
        cases=[
            {"id": "c1", "env": {"kind": "prompt"}, "task": "What is 2+2?", "expected": "4"},
            added,
        ],
    )
    assert invoke(cli_env, "register", first).exit_code == 0
    assert invoke(cli_env, "register", second).exit_code == 0
    assert invoke(cli_env, "datasets", "tag", "qa", "1.1.0", "[u]rc").stdout == (
        "qa@1.1.0 tags: [u]rc\n"
    )
    result = invoke(cli_env, "datasets", "diff", "qa", "1.0.0", "1.1.0")
    assert result.exit_code == 0, result.output
    assert "+ [b]x [/] [i]y" in result.stdout
    versions = invoke(cli_env, "datasets", "versions", "qa")
    assert "[u]rc" in versions.stdout


def test_error_messages_keep_their_bracketed_text(cli_env: dict[str, str]) -> None:
    result = invoke(cli_env, "workspaces", "create", "bad ws/")
    assert result.exit_code == 1
    assert "[a-z0-9_-]" in result.stderr


def test_register_and_import_print_the_same_outcome_line_with_plural_and_grouped_counts(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    path = write_dataset(tmp_path, "qa.json")
    assert invoke(cli_env, "register", path).stdout == "registered qa@1.0.0 (1 case)\n"
    assert invoke(cli_env, "register", path).stdout == "unchanged qa@1.0.0 (1 case)\n"
    assert invoke(cli_env, "datasets", "delete", "qa", "1.0.0").exit_code == 0
    assert invoke(cli_env, "register", path).stdout == "revived qa@1.0.0 (1 case)\n"
    spec = tmp_path / "recipe.json"
    spec.write_bytes(
        orjson.dumps({"id": "rows", "source": {"kind": "file"}, "mapping": {"task_field": "q"}})
    )
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(f'{{"q": "question {i}"}}\n' for i in range(1234)))
    result = invoke(cli_env, "import", "--spec", str(spec), "--file", str(data))
    assert result.exit_code == 0, result.output
    assert result.stdout == "registered rows@1.0.0 (1,234 cases)\n"


def test_benchmarks_list_never_truncates_an_id_at_80_columns(cli_env: dict[str, str]) -> None:
    catalog = orjson.loads(invoke(cli_env, "benchmarks", "list", "--json").stdout)
    result = invoke(cli_env, "benchmarks", "list")
    assert result.exit_code == 0, result.output
    assert max(len(line) for line in result.stdout.splitlines()) <= 80
    shown = {line.split("│")[1].strip() for line in result.stdout.splitlines() if "│" in line}
    assert {b["id"] for b in catalog} <= shown


def test_a_diff_of_produced_by_prints_only_the_changed_leaves(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    def produced(file: str, sha: str) -> dict[str, object]:
        return {
            "via": "spec",
            "id": "qa",
            "source": {"kind": "file", "file": file, "sha256": sha},
        }

    old, new = "ab" * 32, "cd" * 32
    first = write_dataset(tmp_path, "a.json", produced_by=produced("a.jsonl", old))
    second = write_dataset(
        tmp_path, "b.json", version="1.1.0", produced_by=produced("b.jsonl", new)
    )
    assert invoke(cli_env, "register", first).exit_code == 0
    assert invoke(cli_env, "register", second).exit_code == 0
    result = invoke(cli_env, "datasets", "diff", "qa", "1.0.0", "1.1.0")
    assert result.exit_code == 0, result.output
    meta = [line.strip() for line in result.stdout.splitlines() if line.startswith("  meta")]
    assert meta == [
        "meta produced_by.source.file: 'a.jsonl' → 'b.jsonl'",
        f"meta produced_by.source.sha256: '{old[:12]}…' → '{new[:12]}…'",
    ]


def test_recipes_show_and_validate_print_bracketed_fields_verbatim(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    path = tmp_path / "recipe.json"
    path.write_bytes(orjson.dumps(body(description="Sums [/] of [i]")))
    assert invoke(cli_env, "recipes", "register", str(path)).exit_code == 0
    shown = invoke(cli_env, "recipes", "show", "arith")
    assert shown.exit_code == 0, shown.output
    assert '"Sums [/] of [i]"' in shown.stdout
    bad = tmp_path / "bad.json"
    bad.write_bytes(orjson.dumps(body(**{"[b]extra": 1})))
    checked = invoke(cli_env, "recipes", "validate", str(bad))
    assert checked.exit_code == 1
    assert checked.stdout.startswith("[b]extra: ")


def test_a_diff_says_how_many_it_left_out_and_export_says_what_it_wrote(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    cases = [
        {"id": f"c{i}", "env": {"kind": "prompt"}, "task": f"Task {i}", "expected": "1"}
        for i in range(5)
    ]
    first = write_dataset(tmp_path, "a.json", cases=cases[:1])
    second = write_dataset(tmp_path, "b.json", version="1.1.0", cases=cases)
    assert invoke(cli_env, "register", first).exit_code == 0
    assert invoke(cli_env, "register", second).exit_code == 0
    result = invoke(cli_env, "datasets", "diff", "qa", "1.0.0", "1.1.0", "--show", "1")
    assert result.exit_code == 0, result.output
    assert "  … 3 more added (--show N or --json to see them)\n" in result.stdout
    assert "more removed" not in result.stdout
    target = tmp_path / "out.jsonl"
    written = invoke(cli_env, "datasets", "export", "qa", "-o", str(target))
    assert written.exit_code == 0, written.output
    size = target.stat().st_size
    assert " ".join(written.stdout.split()) == (
        f"wrote 5 cases ({size:,} bytes) of qa@latest to {target}"
    )


def test_a_diff_of_two_long_texts_shows_where_they_differ(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    """``meta description: 'Grade-school…' → 'Grade-school…'`` hid the change."""
    same = "Grade-school math word problems, "
    first = write_dataset(tmp_path, "a.json", description=same + "test split of the original")
    second = write_dataset(
        tmp_path, "b.json", version="1.1.0", description=same + "train split of the original"
    )
    assert invoke(cli_env, "register", first).exit_code == 0
    assert invoke(cli_env, "register", second).exit_code == 0
    result = invoke(cli_env, "datasets", "diff", "qa", "1.0.0", "1.1.0")
    assert result.exit_code == 0, result.output
    said = " ".join(result.stdout.split())  # rich wraps at 80 columns
    assert (
        "meta description: '…blems, test split of the origina…' → '…blems, train split of the"
        " origin…'"
    ) in said
