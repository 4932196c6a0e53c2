"""Which tests run on PostgreSQL too (``tests/conftest.py``, :data:`BOTH_BACKENDS_UNDER`): both
backends below the transports and in modules marked ``both_backends``; SQLite only elsewhere,
unless ``BENCHBOOK_TEST_BACKENDS=all``. Checked on pytest's own collection, in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILES = (
    "tests/services/test_keys.py",  # below the transports: both
    "tests/api/test_fidelity.py",  # a transport module marked both_backends
    "tests/api/test_keys.py",  # a transport module: SQLite only
)


def _collected(**env: str) -> dict[str, set[str]]:
    """``file → {backend ids}`` of the parametrized tests pytest collects from :data:`FILES`."""
    environ = {k: v for k, v in os.environ.items() if k != "BENCHBOOK_TEST_BACKENDS"} | env
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *FILES],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        check=True,
    )
    found: dict[str, set[str]] = {name: set() for name in FILES}
    for line in done.stdout.splitlines():
        path, _, rest = line.partition("::")
        if path in found and rest.endswith("]"):
            ids = rest.rsplit("[", 1)[1][:-1].split("-")
            found[path] |= {x for x in ids if x in ("sqlite", "postgresql")}
    return found


def test_postgresql_runs_below_the_transports_and_where_a_module_asks() -> None:
    assert _collected() == {
        "tests/services/test_keys.py": {"sqlite", "postgresql"},
        "tests/api/test_fidelity.py": {"sqlite", "postgresql"},
        "tests/api/test_keys.py": {"sqlite"},
    }


def test_every_transport_test_runs_on_both_when_asked() -> None:
    assert _collected(BENCHBOOK_TEST_BACKENDS="all") == {
        name: {"sqlite", "postgresql"} for name in FILES
    }
