"""Many clients at once against one real server (issue 32: "50 clients × 60 s mixed
reads/writes", p99 ≤ 1 s, no errors).

``.venv/bin/python -m bench.load [--clients 50] [--seconds 60] [--backends sqlite,postgresql]
[--workers N] [--src SRC] [--mix mixed|health|cost] [--only KIND,…] [--datasets 12] [--cases 200]``

Per backend: a fresh database (an SQLite file; on PostgreSQL a new database created on
``BENCHBOOK_BENCH_DATABASE_URL`` or the local server), migrated, with users and API keys seeded
in process (an admin, three members and a viewer; one write key each, the viewer a read key).
Then ``benchbook serve`` of the tree ``--src`` (default this tree; ``--workers N`` passed on
when given) starts on a free port with its runs worker off, and the data is seeded over HTTP:
``--datasets`` datasets of ``--cases`` prompt cases (two versions each) and four reported runs
on each of the first four datasets (their scorecards are compared and read).

Then ``--clients`` clients, each its own ``httpx.AsyncClient`` (its own connection pool, httpx's
defaults: keep-alive, 5 s idle expiry) and its own API key, send requests back to back for
``--seconds`` seconds. Each request is drawn by weight from :data:`MIX`: reads (datasets list,
a case page, runs list, a scorecard, a comparison of two runs) and writes (version tags,
scorecard tags, comments, a 5-row import, a 50-row run report). ``--mix health`` sends only
``GET /api/health`` (the floor of the HTTP stack). ``--mix cost`` instead sends, from one
client, ``--cost-n`` requests of each kind (or of the ``--only`` kinds) in turn and prints the
server's CPU ms per request of each kind.

Prints per kind and overall: requests, errors (by status code or exception name), p50/p95/p99
in ms; requests/s; the load average before and after; the server's CPU seconds (all its
processes). Exits 1 when any request failed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from bench.__main__ import _PG, _pg_admin_url, database
from bench.export_http import SERVE, _env, _free_port, _proc_cpu

ROOT = Path(__file__).resolve().parents[1]
TAGS = ("prod", "baseline", "candidate", "nightly")
#: ``kind: weight``; reads ~3/4 of the requests, writes ~1/4.
MIX = {
    "datasets_list": 14,
    "case_page": 16,
    "runs_list": 12,
    "scorecard": 12,
    "compare": 10,
    "tags": 8,
    "scorecard_tags": 4,
    "comment": 10,
    "import": 4,
    "report": 10,
}
USERS = (("admin", "admin"), ("m1", "member"), ("m2", "member"), ("m3", "member"), ("v", "viewer"))
READS = {"datasets_list", "case_page", "runs_list", "scorecard", "compare", "health"}


@dataclass
class World:
    """What the clients act on: dataset ids, runs per dataset, scorecard ids, keys by role."""

    datasets: list[str]
    runs: dict[str, list[str]]
    scorecards: list[str]
    keys: dict[str, str]
    cases: int


@dataclass
class Tally:
    """Latencies (seconds) and outcomes per kind."""

    seconds: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))


def seed_keys(url: str, home: Path) -> dict[str, str]:
    """Migrate ``url``, create the users of :data:`USERS` in ``default`` and one key each:
    ``{user: key}`` (the viewer's key reads only)."""
    from benchbook.services import accounts, keys
    from benchbook.services.context import local_admin_context
    from benchbook.settings import Settings
    from benchbook.store.engine import make_engine, migrate

    engine = make_engine(url)
    migrate(engine)
    ctx = local_admin_context(engine, Settings(home=home, database_url=url))
    out: dict[str, str] = {}
    for name, role in USERS:
        email = f"{name}@load.example"
        accounts.create_user(ctx, email, name)
        accounts.add_member(ctx, email, role)  # type: ignore[arg-type]
        scope = "read" if role == "viewer" else ("admin" if role == "admin" else "write")
        out[name] = keys.create_api_key(ctx, "load", scope, user=email).key  # type: ignore[arg-type]
    engine.dispose()
    return out


def serve(
    src: Path, home: Path, url: str, workers: int | None
) -> tuple[subprocess.Popen[bytes], str]:
    """``benchbook serve`` of the tree ``src`` (runs worker off) on a free port; the process and
    its base URL once ``/api/health`` answers."""
    port = _free_port()
    cmd = [sys.executable, "-c", SERVE, "serve", "--port", str(port)]
    cmd += ["--workers", str(workers)] if workers else []
    log = (home / "serve.log").open("wb")
    proc = subprocess.Popen(cmd, env=_env(src, home, url), stdout=log, stderr=log)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if httpx.get(base + "/api/health", timeout=2).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    proc.kill()
    raise SystemExit(f"benchbook serve ({src}) did not start:\n{(home / 'serve.log').read_text()}")


def _cases(dataset: str, n: int, salt: str = "") -> list[dict[str, Any]]:
    return [
        {"id": f"c{i}", "env": {"kind": "prompt"}, "task": f"{dataset} {salt}: {i} + {i}?",
         "expected": str(2 * i), "tags": ["even" if i % 2 == 0 else "odd"]}
        for i in range(n)
    ]  # fmt: skip


def _report(dataset: str, harness: str, n: int, rng: random.Random) -> dict[str, Any]:
    results = [
        {"case_id": f"c{i}", "answer": str(2 * i if rng.random() < 0.6 else i),
         "trace": {"usage": {"input_tokens": 100, "output_tokens": 5}}}
        for i in range(n)
    ]  # fmt: skip
    return {"dataset": dataset, "harness": harness, "results": results}


def seed_data(base: str, key: str, n_datasets: int, n_cases: int) -> World:
    """Datasets (1.0.0 and 1.1.0 each) and four reported runs on each of the first four."""
    rng = random.Random(1)
    h = {"authorization": f"Bearer {key}"}
    datasets: list[str] = []
    runs: dict[str, list[str]] = {}
    cards: list[str] = []
    with httpx.Client(base_url=base, headers=h, timeout=120) as c:
        for d in range(n_datasets):
            ds = f"load-{d:02d}"
            for version, salt in (("1.0.0", ""), ("1.1.0", "v2")):
                body = {"id": ds, "version": version, "cases": _cases(ds, n_cases, salt)}
                c.post("/api/datasets", json=body).raise_for_status()
            datasets.append(ds)
        for ds in datasets[:4]:
            runs[ds] = []
            for k in range(4):
                got = c.post("/api/runs/report", json=_report(ds, f"h{k}@1.0.0", n_cases, rng))
                got.raise_for_status()
                runs[ds].append(got.json()["id"])
                cards.append(got.json()["scorecard_id"])
    return World(datasets, runs, cards, {}, n_cases)


async def _one(c: httpx.AsyncClient, kind: str, w: World, rng: random.Random, me: str) -> int:
    """Send one request of ``kind``; its status code."""
    ds = rng.choice(w.datasets)
    if kind == "health":
        r = await c.get("/api/health")
    elif kind == "datasets_list":
        r = await c.get(
            "/api/datasets", params={"limit": 50, "sort": rng.choice(["name", "updated"])}
        )
    elif kind == "case_page":
        after = rng.randrange(0, max(1, w.cases - 50))
        r = await c.get(f"/api/datasets/{ds}/versions/latest", params={"limit": 50, "after": after})
    elif kind == "runs_list":
        r = await c.get("/api/runs", params={"limit": 50})
    elif kind == "scorecard":
        r = await c.get(f"/api/scorecards/{rng.choice(w.scorecards)}")
    elif kind == "compare":
        a, b = rng.sample(w.runs[rng.choice(list(w.runs))], 2)
        r = await c.get("/api/scorecards/compare", params={"baseline": a, "candidate": b})
    elif kind == "tags":
        body: dict[str, Any] = {"tags": rng.sample(TAGS, rng.randint(1, 2))}
        r = await c.put(
            f"/api/datasets/{ds}/versions/{rng.choice(['1.0.0', '1.1.0'])}/tags", json=body
        )
    elif kind == "scorecard_tags":
        body = {"tags": rng.sample(TAGS, rng.randint(1, 2))}
        r = await c.put(f"/api/scorecards/{rng.choice(w.scorecards)}/tags", json=body)
    elif kind == "comment":
        body = {
            "resource_type": "dataset",
            "resource_id": ds,
            "body": f"{me}: looks fine {rng.random()}",
        }
        r = await c.post("/api/comments", json=body)
    elif kind == "import":
        rows = [
            f'{{"question": "{me} {rng.random()} {i}?", "answer": "#### {i}"}}' for i in range(5)
        ]
        body = {
            "benchmark": "gsm8k",
            "id": f"imp-{me}",
            "text": "\n".join(rows),
            "format": "jsonl",
            "bump": "patch",
        }
        r = await c.post("/api/benchmarks/import", json=body)
    elif kind == "report":
        body = _report(rng.choice(list(w.runs)), f"{me}@1.0.0", 50, rng)
        r = await c.post("/api/runs/report", json=body)
    else:
        raise ValueError(kind)
    return r.status_code  # fmt: skip


def _kinds(mix: str, role: str) -> tuple[list[str], list[int]]:
    if mix == "health":
        return ["health"], [1]
    allowed = {k: v for k, v in MIX.items() if role != "viewer" or k in READS}
    if role == "member":  # tags on another's scorecard need runs:manage
        allowed.pop("scorecard_tags", None)
    return list(allowed), list(allowed.values())


async def client(n: int, w: World, base: str, until: float, mix: str, tally: Tally) -> None:
    """One client: its own pool and key, requests back to back until ``until``."""
    name, role = USERS[n % len(USERS)]
    rng = random.Random(n)
    kinds, weights = _kinds(mix, role)
    me = f"c{n}"
    headers = {"authorization": f"Bearer {w.keys[name]}"}
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=60) as c:
        while time.monotonic() < until:
            kind = rng.choices(kinds, weights)[0]
            started = time.perf_counter()
            try:
                status = await _one(c, kind, w, rng, me)
                outcome = None if status < 400 else str(status)
            except httpx.HTTPError as exc:
                outcome = type(exc).__name__
            tally.seconds[kind].append(time.perf_counter() - started)
            if outcome is not None:
                tally.errors[kind][outcome] += 1


async def costs(w: World, base: str, pid: int, n: int, only: list[str]) -> None:
    """One client, ``n`` requests of each kind in turn: the server's CPU ms per request."""
    rng = random.Random(0)
    headers = {"authorization": f"Bearer {w.keys['admin']}"}
    print(f"   {'kind':<15}{'CPU ms/req':>11}{'wall ms/req':>12}")
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=60) as c:
        for kind in only or ["health", *MIX]:
            cpu0, t0 = _tree_cpu(pid), time.perf_counter()
            for _ in range(n):
                status = await _one(c, kind, w, rng, "cost")
                assert status < 400, (kind, status)
            cpu, wall = _tree_cpu(pid) - cpu0, time.perf_counter() - t0
            print(f"   {kind:<15}{cpu / n * 1000:>11.1f}{wall / n * 1000:>12.1f}")


def _pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))] * 1000


def _tree_cpu(pid: int) -> float:
    """CPU seconds of ``pid`` and its children (uvicorn's worker processes)."""
    total = _proc_cpu(pid)
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(stat[1]) == pid:
                total += _tree_cpu(int(entry.name))
    return total


def report(label: str, tally: Tally, seconds: float, loads: tuple[Any, Any], cpu: float) -> int:
    """Print the table; the number of failed requests."""
    every = [x for xs in tally.seconds.values() for x in xs]
    failed = sum(sum(c.values()) for c in tally.errors.values())
    rate, per = len(every) / seconds, cpu / max(1, len(every)) * 1000
    print(f"\n== {label}: {len(every)} requests in {seconds:.1f} s = {rate:.1f} req/s,"
          f" {failed} errors; server CPU {cpu:.1f} s ({per:.1f} ms/request)")  # fmt: skip
    print(f"   load average before {loads[0]}, after {loads[1]}")
    print(f"   {'kind':<15}{'n':>7}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}  errors")
    rows = [*sorted(tally.seconds.items()), ("ALL", every)]
    for kind, xs in rows:
        errs = tally.errors.get(kind) if kind != "ALL" else sum(tally.errors.values(), Counter())
        shown = ", ".join(f"{k}×{v}" for k, v in sorted((errs or {}).items())) or "-"
        ps = "".join(f"{_pct(xs, p):>9.0f}" for p in (0.5, 0.95, 0.99))
        print(f"   {kind:<15}{len(xs):>7}{ps}  {shown}")
    return failed


def _loadavg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def run_backend(backend: str, opts: Any) -> int:
    """Seed, serve, load; the number of failed requests."""
    if backend == "postgresql" and _PG[0] is None:
        _PG[0] = _pg_admin_url()
        if _PG[0] is None:
            return 0
    with (
        tempfile.TemporaryDirectory(prefix="bb-load-") as tmp,
        database(backend, Path(tmp), "load") as url,
    ):
        home = Path(tmp) / "home"
        home.mkdir()
        keys = seed_keys(url, home)
        proc, base = serve(opts.src, home, url, opts.workers)
        try:
            world = seed_data(base, keys["admin"], opts.datasets, opts.cases)
            world.keys = keys
            print(
                f"{backend}: serving {opts.src} at {base}"
                f" (pid {proc.pid}, workers {opts.workers or 1})"
            )
            if opts.mix == "cost":
                asyncio.run(costs(world, base, proc.pid, opts.cost_n, opts.only))
                return 0
            tally = Tally()
            loads0, cpu0 = _loadavg(), _tree_cpu(proc.pid)
            started = time.monotonic()
            until = started + opts.seconds

            async def everyone() -> None:
                await asyncio.gather(*(client(n, world, base, until, opts.mix, tally)
                                       for n in range(opts.clients)))  # fmt: skip

            asyncio.run(everyone())
            elapsed = time.monotonic() - started
            cpu = _tree_cpu(proc.pid) - cpu0
            label = f"{backend}, {opts.clients} clients × {opts.seconds:g} s, {opts.mix}"
            return report(label, tally, elapsed, (loads0, _loadavg()), cpu)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
            if opts.log:
                print((home / "serve.log").read_text()[-opts.log :])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--clients", type=int, default=50)
    p.add_argument("--seconds", type=float, default=60)
    p.add_argument("--backends", default="sqlite,postgresql")
    p.add_argument("--workers", type=int, default=None, help="passed to benchbook serve")
    p.add_argument("--src", type=Path, default=ROOT / "src", help="the tree whose server runs")
    p.add_argument("--mix", choices=["mixed", "health", "cost"], default="mixed")
    p.add_argument("--datasets", type=int, default=12)
    p.add_argument("--cases", type=int, default=200)
    p.add_argument("--cost-n", type=int, default=100, help="requests per kind with --mix cost")
    p.add_argument("--only", type=lambda v: v.split(","), default=[], help="kinds, with cost")
    p.add_argument("--log", type=int, default=0, help="print the last N chars of the server log")
    opts = p.parse_args()
    failed = sum(run_backend(b, opts) for b in opts.backends.split(","))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
