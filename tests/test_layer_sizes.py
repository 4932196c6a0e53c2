"""Every module stays small enough for a reader to hold (issue 32, DESIGN: modules ≤ 450 lines).

Migrations and ``store/tables.py`` (the schema, one table after another) are exempt.
"""

from __future__ import annotations

from pathlib import Path

import benchbook

MAX_LINES = 450
SRC = Path(benchbook.__file__).parent
EXEMPT = ("store/migrations/", "store/tables.py")


def oversized(root: Path, limit: int = MAX_LINES) -> dict[str, int]:
    """``{path relative to root: lines}`` of the Python modules under ``root`` longer than
    ``limit`` lines, the exempt ones left out."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(EXEMPT):
            continue
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > limit:
            found[rel] = lines
    return found


def test_no_module_is_longer_than_450_lines() -> None:
    too_long = oversized(SRC)
    assert too_long == {}, f"split these modules by noun (≤ {MAX_LINES} lines): {too_long}"


def test_the_check_sees_a_long_module_and_skips_the_exempt_ones(tmp_path: Path) -> None:
    long = "x = 1\n" * (MAX_LINES + 1)
    (tmp_path / "store" / "migrations").mkdir(parents=True)
    (tmp_path / "services").mkdir()
    (tmp_path / "services" / "big.py").write_text(long)
    (tmp_path / "services" / "fits.py").write_text("x = 1\n" * MAX_LINES)
    (tmp_path / "store" / "tables.py").write_text(long)
    (tmp_path / "store" / "migrations" / "0001_init.py").write_text(long)
    assert oversized(tmp_path) == {"services/big.py": MAX_LINES + 1}
