"""The ContextBench loader (SPEC I, LOCALIZATION §1) on the real release and on small tables."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from benchbook.datasets.catalog import get_entry
from benchbook.datasets.contextbench import (
    RELEASE_FILE,
    RELEASE_SHA256,
    ContextBenchSource,
    Selection,
    load_contextbench,
    normalize_path,
    repo_of,
)
from benchbook.errors import InvalidInput


@pytest.fixture(scope="module")
def release(shared_data: Path) -> Path:
    return shared_data / "contextbench" / RELEASE_FILE


def test_the_50_release_rows_load_with_the_published_counts(release: Path) -> None:
    rows, report = load_contextbench(release)
    assert report.rows == len(rows) == 50
    assert report.by_source == {"Verified": 17, "Multi": 16, "Poly": 12, "Pro": 5}
    assert report.by_language == {
        "python": 26,
        "typescript": 6,
        "javascript": 6,
        "java": 4,
        "go": 3,
        "rust": 3,
        "c": 2,
    }
    assert (report.spans, report.duplicates, report.spans_kept) == (391, 2, 389)
    assert report.duplicate_rows == [
        "Multi-SWE-Bench__go__maintenance__bugfix__4d9664f3",
        "Multi-SWE-Bench__javascript__maintenance__bugfix__72488b59",
    ]
    assert report.dotfiles == [".size-limit.js"]
    assert report.unprefixed_files == ["run_svelte_test.js", "CustomJsonNodeTest.java"]
    assert report.rows_with_hints == 26
    assert sum(len(r["gold_context"]) for r in rows) == 389
    assert not any(s["file"].startswith("/") for r in rows for s in r["gold_context"])
    assert all("/" in r["repo"] for r in rows)
    lengths = [len(r["gold_context"]) for r in rows]
    assert (min(lengths), max(lengths)) == (1, 65)


def test_curated_and_original_ids_stay_apart_and_select_separately(release: Path) -> None:
    by_original = Selection(original_ids=frozenset({"cli__cli-5973"}))
    (row,), _ = load_contextbench(release, by_original)
    assert row["instance_id"] == "Multi-SWE-Bench__go__maintenance__bugfix__2fea5f6b"
    assert (row["repo"], row["original_inst_id"]) == ("cli/cli", "cli__cli-5973")
    (same,), _ = load_contextbench(release, Selection(ids=frozenset({row["instance_id"]})))
    assert same == row
    # an original id is not a curated id
    with pytest.raises(InvalidInput, match=r"unknown instance_id values: cli__cli-5973"):
        load_contextbench(release, Selection(ids=frozenset({"cli__cli-5973"})))


def test_selection_by_source_and_language(release: Path) -> None:
    rows, report = load_contextbench(
        release, Selection(sources=frozenset({"Multi"}), languages=frozenset({"rust", "c"}))
    )
    assert report.rows == len(rows) == 5
    assert {(r["source"], r["language"]) for r in rows} == {("Multi", "rust"), ("Multi", "c")}


def test_a_file_that_is_not_the_pinned_release_is_refused(release: Path, tmp_path: Path) -> None:
    changed = tmp_path / RELEASE_FILE
    shutil.copy(release, changed)
    with changed.open("ab") as f:
        f.write(b"\0")
    with pytest.raises(InvalidInput, match=f"not the pinned ContextBench release {RELEASE_SHA256}"):
        load_contextbench(changed)
    rows, _ = load_contextbench(release, sha256=None)  # a local table is not pinned
    assert len(rows) == 50


def _row(**fields: Any) -> dict[str, Any]:
    row = {
        "instance_id": "Multi-SWE-Bench__go__maintenance__bugfix__00000001",
        "original_inst_id": "fasterxml__jackson-core-964",
        "repo": "jackson-core",
        "language": "java",
        "base_commit": "a" * 40,
        "gold_context": orjson.dumps(
            [
                {"file": "/workspace/fasterxml__jackson-core__0.1/src/A.java", "start_line": 1,
                 "end_line": 3, "content": "1\tclass A {"},
                {"file": "./.github/ci.yml", "start_line": 2, "end_line": 2, "content": "x"},
            ]
        ).decode(),
        "patch": "diff",
        "test_patch": "diff",
        "problem_statement": "fix it",
        "source": "Multi",
        "f2p": "['t1']",
        "p2p": '{"t2": {"fix": "PASS"}}',
    }  # fmt: skip
    row.update(fields)
    return row


def _table(tmp_path: Path, *rows: dict[str, Any]) -> Path:
    path = tmp_path / "local.jsonl"
    path.write_bytes(b"\n".join(orjson.dumps(r) for r in rows))
    return path


def test_a_local_table_is_normalized(tmp_path: Path) -> None:
    (row,), report = load_contextbench(_table(tmp_path, _row()), sha256=None)
    assert row["repo"] == "fasterxml/jackson-core"
    assert [s["file"] for s in row["gold_context"]] == ["src/A.java", ".github/ci.yml"]
    assert report.dotfiles == [".github/ci.yml"] and report.unprefixed_files == []
    assert row["f2p"] == ["t1"] and row["p2p"] == {"t2": {"fix": "PASS"}}


@pytest.mark.parametrize(
    ("span", "message"),
    [
        ({"file": "a.py", "start_line": 0, "end_line": 2}, r"lines 0-2 are not 1-based"),
        ({"file": "a.py", "start_line": 5, "end_line": 4}, r"lines 5-4 are not 1-based"),
        ({"file": "a.py", "start_line": "1", "end_line": 2}, r"must be integers"),
        ({"start_line": 1, "end_line": 2}, r"needs a string 'file'"),
    ],
)
def test_invalid_spans_are_named_by_row_and_span(
    tmp_path: Path, span: dict[str, Any], message: str
) -> None:
    bad = _row(instance_id="x2", gold_context=orjson.dumps([span]).decode())
    with pytest.raises(InvalidInput, match=message) as info:
        load_contextbench(_table(tmp_path, _row(), bad), sha256=None)
    assert "row 2 (x2).gold_context[0]" in info.value.message


def test_gold_context_that_is_not_json_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match=r"row 1 .*gold_context: not valid JSON"):
        load_contextbench(
            _table(tmp_path, _row(gold_context="context0：\nfile: a.py")), sha256=None
        )


@pytest.mark.parametrize(
    ("repo", "original", "expected"),
    [
        ("cli", "cli__cli-5973", "cli/cli"),
        ("jackson-core", "fasterxml__jackson-core-964", "fasterxml/jackson-core"),  # 'c' is hex
        ("core", "vuejs__core-10289", "vuejs/core"),
        ("x", f"instance_NodeBB__NodeBB-{'f' * 40}-v{'0' * 40}", "NodeBB/NodeBB"),
        ("django/django", "django__django-12419", "django/django"),
    ],
)
def test_owner_and_repo_come_from_the_original_id_when_the_column_has_no_owner(
    repo: str, original: str, expected: str
) -> None:
    assert repo_of(repo, original) == expected


def test_checkout_prefixes_are_stripped_and_dotfiles_kept() -> None:
    assert normalize_path("/workspace/vuejs__core__0.1/package.json") == ("package.json", False)
    assert normalize_path("/workspace/run_svelte_test.js") == ("run_svelte_test.js", True)
    assert normalize_path(".size-limit.js") == (".size-limit.js", False)
    assert normalize_path("./src/a.py") == ("src/a.py", False)


def test_the_catalog_hook_checks_out_the_owners_repository() -> None:
    """The hook once read ``fasterxml__jackson-core-964`` as ``fasterxml/jackson`` (the ``c`` of
    ``core`` is a hex digit)."""
    entry = get_entry("contextbench-verified")
    assert entry.hook is not None
    row = _row()
    case: dict[str, Any] = {
        "env": {"kind": "repo", "source": {"git": "https://github.com/jackson-core.git"}},
        "metadata": {k: row[k] for k in ("gold_context", "f2p", "p2p", "repo")},
    }
    entry.hook(case, row)
    assert case["env"]["source"]["git"] == "https://github.com/fasterxml/jackson-core.git"
    assert [s["file"] for s in case["metadata"]["gold_context"]] == ["src/A.java", ".github/ci.yml"]


def test_the_source_knows_the_release_sha256_before_any_row_and_names_a_missing_file(
    release: Path, tmp_path: Path
) -> None:
    assert ContextBenchSource(release).ref.sha256 == RELEASE_SHA256
    missing = ContextBenchSource(tmp_path / "gone.parquet")
    assert missing.ref.sha256 is None
    with pytest.raises(InvalidInput, match=r"gone\.parquet"):
        next(missing.rows())
