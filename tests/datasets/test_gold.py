"""Gold locations from patches (SPEC I, LOCALIZATION §3): synthetic edges, SWE-bench Lite,
and real repositories from the ContextBench bundles."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchbook.datasets.gold import (
    FileGold,
    LineRange,
    gold_files,
    gold_locations,
    patch_lines,
    tree_from_git,
)
from benchbook.errors import InvalidInput
from tests.repo_bundles import BundledRepo

BASE_PY = b"""import os


class Shop:
    def price(self, x):
        return x * 2

    def tax(self, x):
        return x


def helper():
    return 1
"""


def tree(files: dict[str, bytes]):  # type: ignore[no-untyped-def]
    return files.get


def one(patch: str, files: dict[str, bytes] | None = None) -> FileGold:
    (fg,) = gold_locations(patch, tree(files or {"shop.py": BASE_PY}))
    return fg


def test_only_removed_and_added_lines_count_never_context_lines() -> None:
    patch = (
        "--- a/shop.py\n+++ b/shop.py\n@@ -4,4 +4,4 @@\n class Shop:\n     def price(self, x):\n"
        "-        return x * 2\n+        return x * 3\n \n"
    )
    fg = one(patch)
    assert fg.removed == [LineRange(6, 6)] and fg.added == [LineRange(6, 6)]
    assert [(s.id, s.change, s.base_lines) for s in fg.symbols] == [
        ("shop.py:Shop.price", "modified", LineRange(5, 6))
    ]
    assert fg.file_level is False


def test_a_new_method_is_added_and_a_removed_function_is_deleted() -> None:
    patch = (
        "--- a/shop.py\n+++ b/shop.py\n@@ -10,5 +10,5 @@\n         return x\n \n-\n"
        "-def helper():\n-    return 1\n+    def fee(self):\n+        return 0\n+\n"
    )
    fg = one(patch)
    changes = {s.id: (s.change, s.base_lines, s.patched_lines) for s in fg.symbols}
    assert changes["shop.py:helper"] == ("deleted", LineRange(12, 13), None)
    assert changes["shop.py:Shop.fee"] == ("added", None, LineRange(12, 13))
    # the blank lines 11 and 14 lie outside every definition: a module-level edit
    assert fg.file_level is True


def test_a_module_level_edit_is_a_file_level_location() -> None:
    patch = "--- a/shop.py\n+++ b/shop.py\n@@ -1 +1 @@\n-import os\n+import sys\n"
    fg = one(patch)
    assert fg.symbols == [] and fg.file_level is True


def test_crlf_patches_tab_timestamps_and_no_newline_markers_are_read_exactly() -> None:
    patch = (
        "--- a/shop.py\t2024-01-01 10:00:00.000 +0000\n"
        "+++ b/shop.py\t2024-01-02 10:00:00.000 +0000\n"
        "@@ -13 +13 @@\n-    return 1\n\\ No newline at end of file\n+    return 2\n"
        "\\ No newline at end of file\n"
    ).replace("\n", "\r\n")
    fg = one(patch)
    assert (fg.path, fg.old_path) == ("shop.py", "shop.py")
    assert fg.removed == [LineRange(13, 13)] and fg.added == [LineRange(13, 13)]
    assert [s.id for s in fg.symbols] == ["shop.py:helper"]


def test_u0_hunks_insertions_and_deletions_use_the_right_numbering() -> None:
    patch = (
        "--- a/shop.py\n+++ b/shop.py\n"
        "@@ -6,0 +7,2 @@\n+        y = 1\n+        return y\n"
        "@@ -9 +10,0 @@\n-        return x\n"
    )
    fg = one(patch)
    assert fg.added == [LineRange(7, 8)] and fg.removed == [LineRange(9, 9)]
    assert {s.id: s.change for s in fg.symbols} == {
        "shop.py:Shop.price": "modified",
        "shop.py:Shop.tax": "modified",
    }


def test_deleted_added_binary_and_renamed_files_are_all_locations() -> None:
    patch = """diff --git a/gone.py b/gone.py
deleted file mode 100644
--- a/gone.py
+++ /dev/null
@@ -1,2 +0,0 @@
-def f():
-    pass
diff --git a/new.go b/new.go
new file mode 100644
--- /dev/null
+++ b/new.go
@@ -0,0 +1,3 @@
+package x
+
+func Run() {}
diff --git a/logo.png b/logo.png
index 1111111..2222222 100644
Binary files a/logo.png and b/logo.png differ
diff --git a/docs/old.md b/docs/new.md
similarity index 100%
rename from docs/old.md
rename to docs/new.md
"""
    files = {"gone.py": b"def f():\n    pass\n"}
    got = {fg.path: fg for fg in gold_locations(patch, tree(files))}
    assert got["gone.py"].status == "deleted"
    assert [(s.id, s.change) for s in got["gone.py"].symbols] == [("gone.py:f", "deleted")]
    assert got["new.go"].status == "added"
    assert [(s.id, s.change) for s in got["new.go"].symbols] == [("new.go:Run", "added")]
    assert got["new.go"].file_level is True  # `package x` is module level
    assert got["logo.png"].binary and got["logo.png"].file_level
    renamed = got["docs/new.md"]
    assert (renamed.status, renamed.old_path, renamed.removed, renamed.added) == (
        "renamed",
        "docs/old.md",
        [],
        [],
    )
    assert gold_files(got.values()) == [
        "docs/new.md",
        "docs/old.md",
        "gone.py",
        "logo.png",
        "new.go",
    ]


@pytest.mark.parametrize(
    ("path", "source", "line", "expected"),
    [
        ("a.js", b"class A {\n  run() {\n    return 1;\n  }\n}\n", 3, "a.js:A.run"),
        ("a.js", b"const go = () => {\n  return 1;\n};\n", 2, "a.js:go"),
        ("a.tsx", b"interface P {\n  x: number;\n}\n", 2, "a.tsx:P"),
        ("A.java", b"class A {\n  A() {\n    x = 1;\n  }\n}\n", 3, "A.java:A.A"),
        ("a.rs", b"impl<T> Foo<T> {\n    fn go(&self) {\n        1;\n    }\n}\n", 3, "a.rs:Foo.go"),
        ("a.cpp", b"class K {\n  int f() {\n    return 1;\n  }\n};\n", 3, "a.cpp:K.f"),
        ("a.h", b"struct S {\n  int x;\n};\n", 2, "a.h:S"),
    ],
)
def test_every_language_names_the_innermost_definition(
    path: str, source: bytes, line: int, expected: str
) -> None:
    old = source.decode().splitlines()[line - 1]
    patch = f"--- a/{path}\n+++ b/{path}\n@@ -{line} +{line} @@\n-{old}\n+{old} \n"
    fg = one(patch, {path: source})
    assert [s.id for s in fg.symbols] == [expected]


def test_non_code_files_are_file_level_without_symbols() -> None:
    fg = one("--- a/README.rst\n+++ b/README.rst\n@@ -1 +1 @@\n-a\n+b\n", {"README.rst": b"a\n"})
    assert fg.symbols == [] and fg.file_level is True


def test_bad_patches_and_mismatched_bases_are_clear_errors() -> None:
    with pytest.raises(InvalidInput, match="not a valid unified diff"):
        patch_lines("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n")
    with pytest.raises(InvalidInput, match=r"missing\.py: not in the base tree"):
        gold_locations("--- a/missing.py\n+++ b/missing.py\n@@ -1 +1 @@\n-a\n+b\n", tree({}))
    with pytest.raises(InvalidInput, match="does not fit the base file"):
        one("--- a/shop.py\n+++ b/shop.py\n@@ -90 +90 @@\n-a\n+b\n")


def test_gold_files_of_all_300_swe_bench_lite_rows_agree_with_the_stored_lists(
    shared_data: Path,
) -> None:
    rows = json.loads((shared_data / "swebench" / "swe-bench-lite-test.json").read_text())
    assert len(rows) == 300
    for row in rows:
        files = patch_lines(row["patch"])
        assert sorted(f.path for f in files) == sorted(row["patch_files"]), row["instance_id"]
        assert all(f.status == "modified" and (f.removed or f.added) for f in files)


def test_all_23_dev_rows_parse_and_sqlfluff_1733_keeps_its_pure_rename(shared_data: Path) -> None:
    rows = json.loads((shared_data / "swebench" / "swe-bench-lite-dev.json").read_text())
    assert len(rows) == 23
    for row in rows:
        for field in ("patch", "test_patch"):
            paths = {f.path for f in patch_lines(row[field])}
            stored = set(row[f"{field}_files"])
            if row["instance_id"] == "sqlfluff__sqlfluff-1733" and field == "test_patch":
                # The stored list leaves out the pure rename (no hunks); ours keeps it.
                assert paths - stored == {"test/rules/std_L016_L36_combo_test.py"}
            else:
                assert paths == stored, (row["instance_id"], field)
    (sqlfluff,) = [r for r in rows if r["instance_id"] == "sqlfluff__sqlfluff-1733"]
    got = {f.path: f for f in patch_lines(sqlfluff["test_patch"])}
    assert got["test/rules/std_L003_L036_L039_combo_test.py"].status == "added"
    rename = got["test/rules/std_L016_L36_combo_test.py"]
    assert (rename.status, rename.old_path, rename.removed, rename.added) == (
        "renamed",
        "test/rules/std_L016_L36_combo.py",
        [],
        [],
    )


# Hand-checked against the files at the base commit (one row per bundled language).
REAL = [
    ("pydata__xarray", "xarray/core/weighted.py", {"Weighted._sum_of_weights": (137, 150)}),
    ("tokio-rs__tracing", "tracing-attributes/src/lib.rs", {"gen_body": (488, 683)}),
    ("clap-rs__clap", "src/output/help.rs", {"Help.write_all_args": (787, 895)}),
    ("cli__cli", "pkg/cmd/workflow/enable/enable.go", {"runEnable": (58, 93)}),
    ("jqlang__jq", "src/main.c", {"main": (275, 728)}),
    ("vuejs__core", "packages/reactivity/src/reactive.ts", {"markRaw": (387, 390)}),
    ("fasterxml__jackson-core", "src/main/java/com/fasterxml/jackson/core/JsonFactory.java", {}),
]


@pytest.mark.parametrize(("name", "path", "expected"), REAL, ids=[r[0] for r in REAL])
def test_symbols_of_real_patches_at_their_base_commits(
    name: str,
    path: str,
    expected: dict[str, tuple[int, int]],
    bundled_repo: BundledRepo,
    contextbench_rows: dict[str, dict[str, str]],
) -> None:
    repo, sha = bundled_repo(name)
    row = contextbench_rows[sha]
    files = {fg.path: fg for fg in gold_locations(row["patch"], tree_from_git(repo, sha))}
    got = {s.qualified: s for s in files[path].symbols}
    for qualified, (start, end) in expected.items():
        assert got[qualified].change == "modified"
        assert got[qualified].base_lines == LineRange(start, end)
    if name == "fasterxml__jackson-core":
        assert got["JsonFactory"].change == "modified"
        added = got["JsonFactory.setStreamReadConstraints"]
        assert (added.change, added.base_lines, added.patched_lines) == (
            "added",
            None,
            LineRange(797, 800),  # the Javadoc above it (782-796) lies in the class
        )
        assert files["release-notes/VERSION-2.x"].file_level


@pytest.fixture(scope="module")
def contextbench_rows(shared_data: Path) -> dict[str, dict[str, str]]:
    """The ContextBench verified rows by base commit."""
    import pyarrow.parquet as pq

    table = pq.read_table(shared_data / "contextbench" / "contextbench_verified_test.parquet")
    return {r["base_commit"]: r for r in table.to_pylist()}


def test_an_edited_rename_reads_the_old_path_and_git_binary_patches_are_file_level() -> None:
    patch = (
        "diff --git a/old/m.py b/new/m.py\nsimilarity index 80%\nrename from old/m.py\n"
        "rename to new/m.py\nindex 111..222 100644\n--- a/old/m.py\n+++ b/new/m.py\n"
        "@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2\n"
        "diff --git a/bin.dat b/bin.dat\nindex e69de29..d00491f 100644\nGIT binary patch\n"
        "literal 1\nIcmZo*000310RR91\n\nliteral 0\nHcmV?d00001\n\n"
    )
    renamed, binary = gold_locations(patch, tree({"old/m.py": b"def f():\n    return 1\n"}))
    assert (renamed.path, renamed.old_path, renamed.status) == ("new/m.py", "old/m.py", "renamed")
    assert [(s.id, s.change) for s in renamed.symbols] == [("new/m.py:f", "modified")]
    assert renamed.file_level  # a rename is a location of its own
    assert (binary.path, binary.binary, binary.removed, binary.file_level) == (
        "bin.dat",
        True,
        [],
        True,
    )
