"""Client benchmark (issue 16): ``.venv/bin/python -m bench.client [--cases 100000]
[--backends sqlite,postgresql] [--page-size 1000] [--before SRC]``.

A GSM8K-like dataset of ``--cases`` cases is imported (the ``import`` task of ``bench.tasks``),
a real ``benchbook serve`` is started on it, and one child process per reader below reads
every case over HTTP:

- **baseline**: bare httpx streaming ``GET …/cases.jsonl`` (the export route), counting lines —
  no parsing, no validation: the least a reader can do;
- **parsed** (a floor): the same stream, each line parsed with ``orjson.loads`` — the least a
  reader that hands out parsed cases can do;
- **validated** (a floor): the same stream, each line validated into the ``Case`` contract by
  its pydantic-core validator (``Case.__pydantic_validator__.validate_json``) — the least a
  reader that hands out validated ``Case`` objects can do;
- **client**: ``Client().cases(ref)`` — the same export streamed (issue 32; keyset pages of
  ``--page-size`` cases before it), each line validated into the ``Case`` contract, nothing
  kept;
- **client before** (with ``--before SRC``): the same, with the package imported from another
  tree's ``src`` (for example main's, from ``git archive main src``), in the same run against the
  same server, so a change is a ratio against a named baseline.

Each child reports its wall time (first request to last case) and its own peak RSS (``VmHWM``).
Exits non-zero when the client's peak RSS reaches 150 MB (the issue's bound).
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
from typing import Any

import orjson

from bench.__main__ import _PG as PG
from bench.__main__ import ROOT, _pg_admin_url, database, spawn
from bench.child import peak_rss_mb
from bench.gen import write_gsm8k_like

PEAK_LIMIT_MB = 150.0
DATASET = "gsm8k-client"


def read_with_client(url: str, ref: str, page_size: int) -> dict[str, Any]:
    """Iterate every case with :class:`benchbook.client.Client` (in this process)."""
    from benchbook.client import Client

    with Client(url) as client:
        started = time.perf_counter()
        n = sum(1 for _ in client.cases(ref, page_size=page_size))
        seconds = time.perf_counter() - started
    return {"cases": n, "seconds": seconds}


def read_raw(url: str, ref: str, _page_size: int) -> dict[str, Any]:
    """Stream the JSONL export with bare httpx, counting lines."""
    import httpx

    dataset_id, _, version = ref.partition("@")
    path = f"/api/datasets/{dataset_id}/versions/{version}/cases.jsonl"
    started = time.perf_counter()
    n = 0
    headers = {"authorization": f"Bearer {os.environ['BENCHBOOK_API_KEY']}"}
    with httpx.stream("GET", url + path, headers=headers, timeout=600) as response:
        response.raise_for_status()
        for chunk in response.iter_bytes():
            n += chunk.count(b"\n")
    return {"cases": n, "seconds": time.perf_counter() - started}


def read_parsed(url: str, ref: str, _page_size: int) -> dict[str, Any]:
    """Stream the JSONL export with bare httpx, parsing each whole line with orjson."""
    import httpx

    dataset_id, _, version = ref.partition("@")
    path = f"/api/datasets/{dataset_id}/versions/{version}/cases.jsonl"
    started = time.perf_counter()
    n, rest = 0, b""
    headers = {"authorization": f"Bearer {os.environ['BENCHBOOK_API_KEY']}"}
    with httpx.stream("GET", url + path, headers=headers, timeout=600) as response:
        response.raise_for_status()
        for chunk in response.iter_bytes():
            *lines, rest = (rest + chunk).split(b"\n")
            for line in lines:
                orjson.loads(line)
                n += 1
    return {"cases": n, "seconds": time.perf_counter() - started}


def read_validated(url: str, ref: str, _page_size: int) -> dict[str, Any]:
    """Stream the JSONL export with bare httpx, validating each whole line into a ``Case``."""
    import httpx

    from benchbook.contracts import Case

    validate = Case.__pydantic_validator__.validate_json
    dataset_id, _, version = ref.partition("@")
    path = f"/api/datasets/{dataset_id}/versions/{version}/cases.jsonl"
    started = time.perf_counter()
    n, rest = 0, b""
    headers = {"authorization": f"Bearer {os.environ['BENCHBOOK_API_KEY']}"}
    with httpx.stream("GET", url + path, headers=headers, timeout=600) as response:
        response.raise_for_status()
        for chunk in response.iter_bytes():
            *lines, rest = (rest + chunk).split(b"\n")
            for line in lines:
                validate(line)
                n += 1
    return {"cases": n, "seconds": time.perf_counter() - started}


READERS = {
    "client": read_with_client,
    "baseline": read_raw,
    "parsed": read_parsed,
    "validated": read_validated,
}


def api_key(url: str) -> str:
    """A key of a new admin of ``default`` (the readers send it as BENCHBOOK_API_KEY)."""
    from benchbook.services import accounts, keys
    from benchbook.services.context import local_admin_context
    from benchbook.settings import Settings
    from benchbook.store.engine import make_engine

    engine = make_engine(url)
    ctx = local_admin_context(engine, Settings(database_url=url))
    accounts.create_user(ctx, "bench@example.org", "Bench")
    accounts.add_member(ctx, "bench@example.org", "admin")
    key = keys.create_api_key(ctx, "bench", "read", user="bench@example.org").key
    engine.dispose()
    return key


def child(
    name: str, url: str, ref: str, page_size: int, key: str, src: Path | None = None
) -> dict[str, Any]:
    """Run one reader in a fresh interpreter, importing ``benchbook`` from ``src`` (default
    this tree's); its result with ``peak_mb``."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(src or ROOT / "src")])}
    env["BENCHBOOK_API_KEY"] = key
    code = [sys.executable, "-m", "bench.client", "--child", name, url, ref, str(page_size)]
    out = subprocess.run(code, cwd=ROOT, env=env, capture_output=True)
    if out.returncode != 0:
        raise SystemExit(f"bench reader {name} failed:\n{out.stderr.decode()[-3000:]}")
    result: dict[str, Any] = orjson.loads(out.stdout.splitlines()[-1])
    return result


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve(url: str, home: Path) -> tuple[subprocess.Popen[bytes], str]:
    """``benchbook serve`` on a free port over ``url`` ."""
    import httpx

    port = _free_port()
    env = {**os.environ, "DATABASE_URL": url, "BENCHBOOK_HOME": str(home),
           "BENCHBOOK_RUN_WORKER": "false"}  # fmt: skip
    cmd = [str(Path(sys.executable).parent / "benchbook"), "serve", "--port", str(port)]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(base + "/api/health", timeout=1).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("benchbook serve did not start")


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        name, url, ref, page_size = argv[1:5]
        result = READERS[name](url, ref, int(page_size))
        result["peak_mb"] = peak_rss_mb()
        print(orjson.dumps(result).decode())
        return 0
    parser = argparse.ArgumentParser(prog="python -m bench.client")
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--page-size", type=int, default=1000)
    parser.add_argument("--before", type=Path, help="another tree's src/ to time Client.cases of")
    args = parser.parse_args(argv)
    if args.before and not (args.before / "benchbook" / "client").is_dir():
        raise SystemExit(f"--before {args.before}: no benchbook/client package there")
    over = False
    with tempfile.TemporaryDirectory(prefix="bench-client-") as tmp:
        work = Path(tmp)
        source = write_gsm8k_like(work / "rows.jsonl", args.cases)
        for backend in args.backends.split(","):
            if backend == "postgresql":
                PG[0] = _pg_admin_url()
                if PG[0] is None:
                    continue
            with database(backend, work, "client") as url:
                spawn("import", url, str(source), DATASET, "1.0.0")
                key = api_key(url)
                proc, base = serve(url, work / f"home-{backend}")
                try:
                    ref = f"{DATASET}@1.0.0"
                    raw = child("baseline", base, ref, args.page_size, key)
                    parsed = child("parsed", base, ref, args.page_size, key)
                    valid = child("validated", base, ref, args.page_size, key)
                    before = args.before and child(
                        "client", base, ref, args.page_size, key, args.before
                    )
                    mine = child("client", base, ref, args.page_size, key)
                finally:
                    proc.terminate()
                    proc.wait(timeout=30)
            assert raw["cases"] == mine["cases"] == args.cases, (raw, mine)
            print(
                f"{backend}: {args.cases:,} cases, page size {args.page_size}\n"
                f"  baseline (httpx JSONL stream): {raw['seconds']:.2f} s, "
                f"peak {raw['peak_mb']:.0f} MB\n"
                f"  parsed (httpx + orjson per line, floor): {parsed['seconds']:.2f} s "
                f"({parsed['seconds'] / raw['seconds']:.2f}x time)\n"
                f"  validated (httpx + Case validator per line, floor): {valid['seconds']:.2f} s "
                f"({valid['seconds'] / raw['seconds']:.2f}x time)\n"
                f"  Client.cases (validated Case): {mine['seconds']:.2f} s, "
                f"peak {mine['peak_mb']:.0f} MB "
                f"({mine['seconds'] / raw['seconds']:.2f}x time, "
                f"{mine['peak_mb'] / raw['peak_mb']:.2f}x memory)"
            )
            if before:
                assert before["cases"] == args.cases, before
                print(
                    f"  Client.cases before ({args.before}): {before['seconds']:.2f} s "
                    f"({before['seconds'] / raw['seconds']:.2f}x time; "
                    f"now {mine['seconds'] / before['seconds']:.2f}x of before)"
                )
            over = over or mine["peak_mb"] >= PEAK_LIMIT_MB
    print(f"load average {os.getloadavg()}")
    if over:
        print(f"FAIL: the client's peak RSS reached {PEAK_LIMIT_MB:.0f} MB")
    return 1 if over else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
