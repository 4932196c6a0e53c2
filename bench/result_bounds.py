"""Peak memory of reading big run results: ``.venv/bin/python -m bench.result_bounds``.

A throw-away SQLite installation holds a reported run of ``--results`` answers of ``--answer-mb``
MB each, and one trace of ``--trace-mb`` MB. A ``benchbook serve`` child serves it twice: once
with ``BENCHBOOK_MAX_PAGE_BYTES`` at its default (16 MiB, the bound of issue 27) and once
unbounded (2**40: how the server behaved before). For each, the child's peak RSS (``VmHWM``)
is printed before and after a client reads every result page (limit 500) and the trace
(``get_run_trace``; over the bound that is a 413, and ``export_run_trace`` streams it).
Loopback only; one reader at a time.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from benchbook.contracts import Dataset
from benchbook.contracts.run import ReportRunRequest
from benchbook.services import accounts
from benchbook.services import datasets as ds
from benchbook.services.context import local_admin_context
from benchbook.services.keys import create_api_key
from benchbook.services.run_reports import report_run
from benchbook.settings import Settings
from benchbook.store.engine import make_engine, migrate


def _peak_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM")


def _seed(home: Path, results: int, answer_mb: float, trace_mb: float) -> tuple[str, str]:
    """``(run id, a read key)``."""
    url = f"sqlite:///{home / 'benchbook.db'}"
    engine = make_engine(url)
    migrate(engine)
    ctx = local_admin_context(engine, Settings(home=home, database_url=url))
    cases = [{"id": f"q{i}", "env": {"kind": "prompt"}, "task": f"{i}?"} for i in range(results)]
    ds.register_dataset(
        ctx, Dataset.model_validate({"id": "big", "version": "1.0.0", "cases": cases})
    )
    size = int(answer_mb * 1_000_000)
    rows = [
        {"case_id": f"q{i}", "answer": f"{i}" + os.urandom(size // 2).hex()} for i in range(results)
    ]
    chunk = 200_000
    messages = [
        {"role": "user", "content": os.urandom(chunk // 2).hex()}
        for _ in range(int(trace_mb * 1_000_000) // chunk)
    ]
    rows[0]["trace"] = {"messages": messages}
    run = report_run(
        ctx,
        ReportRunRequest.model_validate(
            {"dataset": "big", "harness": "ext@1.0.0", "results": rows}
        ),
    )
    accounts.create_user(ctx, "viewer@example.org", "Viewer")
    accounts.add_member(ctx, "viewer@example.org", "viewer")
    key = create_api_key(ctx, "bench", "read", user="viewer@example.org").key
    engine.dispose()
    return run.id, key


def _serve(home: Path, page_bytes: int) -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {
        **os.environ,
        "BENCHBOOK_HOME": str(home),
        "DATABASE_URL": f"sqlite:///{home / 'benchbook.db'}",
        "BENCHBOOK_MAX_PAGE_BYTES": str(page_bytes),
        "BENCHBOOK_RUN_WORKER": "false",
    }
    cmd = [str(Path(sys.executable).parent / "benchbook"), "serve", "--port", str(port)]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(base + "/api/health", timeout=1).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError("server did not start")
        time.sleep(0.2)


def _read(base: str, run_id: str, key: str) -> tuple[int, int, int]:
    """(pages, bytes of result pages, status of get_run_trace)."""
    pages = total = 0
    after: str | None = None
    headers = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=base, timeout=600, headers=headers) as http:
        while True:
            params = {"limit": 500} | ({"after": after} if after else {})
            answer = http.get(f"/api/runs/{run_id}/results", params=params)
            answer.raise_for_status()
            page = answer.json()
            if not page:
                break
            pages, total = pages + 1, total + len(answer.content)
            after = f"{page[-1]['position']}:{page[-1]['sample']}"
        trace = http.get(f"/api/runs/{run_id}/traces/q0").status_code
        if trace == 413:
            with http.stream("GET", f"/api/runs/{run_id}/trace-exports/q0") as stream:
                for _ in stream.iter_bytes():
                    pass
    return pages, total, trace


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=int, default=300)
    parser.add_argument("--answer-mb", type=float, default=1.0)
    parser.add_argument("--trace-mb", type=float, default=100.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        run_id, key = _seed(home, args.results, args.answer_mb, args.trace_mb)
        print(f"{args.results} answers of {args.answer_mb} MB, one trace of {args.trace_mb} MB")
        for label, bound in (("bounded (16 MiB)", 16 << 20), ("unbounded (before)", 1 << 40)):
            proc, base = _serve(home, bound)
            try:
                before = _peak_mib(proc.pid)
                pages, total, trace = _read(base, run_id, key)
                after = _peak_mib(proc.pid)
            finally:
                proc.terminate()
                proc.wait(30)
            print(
                f"{label:>20}: peak RSS {before:.0f} → {after:.0f} MiB (+{after - before:.0f}); "
                f"{pages} pages, {total / 1e6:.0f} MB; get_run_trace {trace}"
            )


if __name__ == "__main__":
    main()
