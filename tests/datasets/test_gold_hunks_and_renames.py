"""Issue 29: a hunk must have exactly the lines its header counts; a rename is located by the
path that exists at the base commit; an insertion has base-numbered gold."""

from __future__ import annotations

import pytest

from benchbook.contracts.dataset import Case
from benchbook.datasets.gold import gold_locations, patch_lines
from benchbook.errors import InvalidInput
from benchbook.eval.graders.localization import gold_spans

PATCH = "--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n+d\n e\n"


def test_a_hunk_longer_than_its_header_is_an_error_quoting_the_header() -> None:
    with pytest.raises(InvalidInput) as err:
        patch_lines(PATCH)
    assert "'@@ -1,2 +1,2 @@'" in str(err.value) and "longer than its header" in str(err.value)
    assert "'+d'" in str(err.value) and "patch line 7" in str(err.value)


def test_a_hunk_shorter_than_its_header_is_an_error_quoting_the_header() -> None:
    with pytest.raises(InvalidInput) as err:
        patch_lines(PATCH.replace("@@ -1,2 +1,2 @@", "@@ -1,4 +1,5 @@"))
    assert "'@@ -1,4 +1,5 @@'" in str(err.value) and "shorter than its header" in str(err.value)


def test_exact_hunks_no_newline_markers_and_the_next_file_are_fine() -> None:
    patch = (
        PATCH.replace("@@ -1,2 +1,2 @@", "@@ -1,3 +1,4 @@")
        + "\\ No newline at end of file\n--- a/y.py\n+++ b/y.py\n@@ -0,0 +1 @@\n+z\n"
    )
    assert [f.path for f in patch_lines(patch)] == ["x.py", "y.py"]


def test_a_pure_rename_is_gold_under_its_old_path() -> None:
    patch = (
        "diff --git a/old/name.py b/new/name.py\nsimilarity index 100%\n"
        "rename from old/name.py\nrename to new/name.py\n"
    )
    case = Case(id="r", env={"kind": "prompt"}, task="t", metadata={"patch": patch})
    assert gold_spans(case) == [{"file": "old/name.py", "start_line": 0, "end_line": 0}]


def test_an_insertion_is_its_base_line_and_its_enclosing_definition() -> None:
    base = b"class A:\n    def f(self):\n        return 1\n\n    def g(self):\n        return 2\n"
    patch = "--- a/m.py\n+++ b/m.py\n@@ -3,0 +4,3 @@\n+\n+    def h(self):\n+        return 3\n"
    [fg] = gold_locations(patch, {"m.py": base}.get)
    assert [(r.start, r.end) for r in fg.inserted] == [(3, 3)]
    assert [(r.start, r.end) for r in fg.enclosing] == [(1, 6)]  # class A, which h joins
    assert [s.id for s in fg.symbols] == ["m.py:A", "m.py:A.h"]
