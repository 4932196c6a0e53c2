"""The terminal's import bar shows how far a file's import is, although its row count is unknown.

A local JSONL or CSV file has no row count before it is read, but the source knows the share of
its bytes read (``ImportProgress.fraction``). The bar used to show rows of an unknown total
(``12,345/?``, a pulsing bar); it now fills by that share and says it as a percentage.
"""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

from bench.gen import write_gsm8k_like

from benchbook.cli.imports import SHARE_STEPS, bar_state
from benchbook.contracts.imports import ImportProgress


def test_the_bar_fills_by_rows_of_a_known_total() -> None:
    state = bar_state(ImportProgress(rows_read=250, cases_built=250, total=1000, fraction=0.25))
    assert state == {"completed": 250, "total": 1000, "share": "25%", "rows": "250/1,000"}


def test_without_a_total_the_bar_fills_by_the_share_of_the_file_read() -> None:
    state = bar_state(ImportProgress(rows_read=12_345, cases_built=12_345, fraction=0.4217))
    assert state == {"completed": 422, "total": SHARE_STEPS, "share": "42%", "rows": "12,345"}


def test_with_neither_the_bar_pulses_and_counts_rows() -> None:
    state = bar_state(ImportProgress(rows_read=7, cases_built=6))
    assert state == {"completed": 0, "total": None, "share": "", "rows": "7"}


def test_a_jsonl_import_on_a_terminal_shows_a_percentage(tmp_path: Path) -> None:
    """The real command on a pseudo-terminal: the transient bar's frames carry ``NN% … rows``."""
    data = write_gsm8k_like(tmp_path / "rows.jsonl", 60_000)
    env = {**os.environ, "BENCHBOOK_HOME": str(tmp_path / "home"), "COLUMNS": "120"}
    env.pop("BENCHBOOK_DATABASE_URL", None)
    env.pop("DATABASE_URL", None)
    env["TERM"] = "xterm-256color"
    script = Path(sys.executable).parent / "benchbook"
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [str(script), "import", "gsm8k", "--file", str(data), "--id", "bar"],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env=env,
        close_fds=True,
    )
    os.close(follower)
    out = bytearray()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed: the command ended
                break
            if not chunk:
                break
            out += chunk
        elif proc.poll() is not None:
            break
    proc.wait(timeout=30)
    os.close(leader)
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.decode("utf-8", "replace"))
    assert proc.returncode == 0, text
    assert "registered bar@1.0.0 (60,000 cases)" in text
    shares = [int(m) for m in re.findall(r"(\d+)% +[\d,]+ rows", text)]
    assert shares, text
    assert shares == sorted(shares) and shares[-1] <= 100
