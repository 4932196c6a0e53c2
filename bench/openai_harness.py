"""openai harness vs lm-eval, CPU per case: ``.venv/bin/python -m bench.openai_harness``.

Issue 32: a run with the ``openai`` harness should spend at most lm-eval's CPU per case
(``local-chat-completions``) against the same server. The test suite's scripted
OpenAI-compatible server (``tests/openaiserver``) runs in a child process (``--serve``) that is
reaped only after the last measurement, so its CPU is in none of the numbers; it answers every
request like a reasoning model that is right (``Let me think step by step.\\nSo the answer is
N.``, N = ``(a − b) · c`` of the row's story). The cases are ``--n2`` generated GSM8K-shaped rows
(``bench/gen.py``) imported as the catalog's ``gsm8k`` benchmark; every side sends the same
question, one user message per case, ``--concurrency`` requests at once:

- **openai SDK, create**: ``openai.AsyncOpenAI().chat.completions.create`` per case in one
  ``asyncio.run``, one client, a semaphore — nothing else (no grading, no storage);
- **openai SDK, post** (the floor of the harness): the same with the client's generic
  ``post("/chat/completions", body=…, cast_to=object)``, as the harness calls it (the SDK's
  retries, timeouts, auth and errors, without its typed-parameter transform and response
  model);
- **lm-eval**: ``lm_eval.simple_evaluate`` with ``local-chat-completions`` (aiohttp,
  ``num_concurrent`` = concurrency, chat template applied) on the task of Benchbook's ``hf``
  export (``lm_eval_task.yaml``: GSM8K's regex filters and ``exact_match``), ``limit`` = N,
  the task manager reading only the export (no index of the built-in tasks), no sample logs
  (``--log-samples`` adds **lm-eval, samples logged**: its results and per-sample JSONL written,
  as ``lm_eval --output_path … --log_samples`` does — the nearest to a run that stores every
  result; the ratios stay against plain lm-eval);
- **benchbook, <backend>**: ``start_run`` + ``execute_run`` (local executor, the
  ``openai`` harness, the cases' own ``numeric`` grader as a GSM8K import sets it, storage on
  SQLite and PostgreSQL — a throw-away database on ``BENCHBOOK_BENCH_DATABASE_URL`` or the
  local server), ``settings.limit`` = N.

CPU is user + system seconds of this process (all threads) plus its reaped children. Each
variant runs at ``--n1`` and ``--n2`` cases in every round (alternating variants, after one
untimed warm-up round); its CPU **per extra case** is ``(CPU(n2) − CPU(n1)) / (n2 − n1)``, so
fixed costs (imports, task building, run start and finish, preflight) cancel. Reported: the
median over rounds in ms/case (in brackets: this thread's alone — the event loop's, which every
request waits on), and the medians of the rounds' ratios benchbook / lm-eval, benchbook and
lm-eval / each SDK line (a round's measurements saw the same load), plus the load average.
Garbage is collected before each measurement. ``--profile NAME`` runs that variant twice more
at ``--n2``, the second time under cProfile (this thread's CPU time: the event loop's; the
writer's thread is not in it).

Exits non-zero when a run does not finish with every case graded, or lm-eval does not score
every case.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import gc
import io
import logging
import os
import pstats
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.__main__ import _PG as PG
from bench.__main__ import _pg_admin_url, database
from bench.gen import write_gsm8k_like

HARNESS = "bench-openai"
MODEL = "test-model"
TASK = "benchbook_gsm8k_1_0_0"  # the lm-eval task of the export of gsm8k@1.0.0
TARGET = 1.0  # benchbook / lm-eval CPU per extra case
RAW = "openai SDK, create"
POST = "openai SDK, post"


def _cpu_s() -> float:
    """User + system seconds of this process (all threads) and of its reaped children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


# -- the server, in a child process --------------------------------------------------------------


def _serve() -> None:
    """Run the scripted server until stdin closes; its URL is the first line of stdout."""
    from tests.openaiserver import OpenAIServer

    with OpenAIServer() as server:
        server.reply = _reply
        print(server.url, flush=True)
        sys.stdin.read()


_STORY = re.compile(r"has (\d+) .*? uses (\d+) .*? \$(\d+) each")


def _reply(body: dict[str, Any]) -> str:
    """A reasoning model's right answer to a generated row (``bench/gen.py``)."""
    from tests.openaiserver import last_user_text

    found = _STORY.search(last_user_text(body))
    if found is None:
        return "I cannot tell."
    a, b, c = map(int, found.groups())
    return f"Let me think step by step.\nSo the answer is {(a - b) * c}."


@contextlib.contextmanager
def _server() -> Any:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    cmd = [sys.executable, "-m", "bench.openai_harness", "--serve"]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        if not url.startswith("http://"):
            raise SystemExit(f"the scripted server did not start (got {url!r})")
        yield url
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=10)


# -- the variants --------------------------------------------------------------------------------


def _questions(n: int) -> list[str]:
    from bench.gen import gsm8k_row

    return [gsm8k_row(i)["question"] for i in range(n)]


def _raw(url: str, questions: list[str], n: int, concurrency: int, post: bool) -> None:
    """``n`` chat completions through one ``AsyncOpenAI``, ``concurrency`` at once: with
    ``chat.completions.create`` (typed parameters in, a ``ChatCompletion`` out), or with
    ``post`` the client's generic ``post`` (JSON-ready dicts in and out, as the harness
    calls it)."""
    import openai

    async def main() -> None:
        client = openai.AsyncOpenAI(base_url=url, api_key="EMPTY", max_retries=2, timeout=600)
        slots = asyncio.Semaphore(concurrency)

        async def one(question: str) -> str:
            messages = [{"role": "user", "content": question}]
            async with slots:
                if post:
                    body: Any = await client.post(
                        "/chat/completions",
                        body={"model": MODEL, "messages": messages},
                        cast_to=object,
                        options={"security": {"bearer_auth": True}},
                    )
                    return str(body["choices"][0]["message"]["content"] or "")
                reply = await client.chat.completions.create(
                    model=MODEL,
                    messages=messages,  # type: ignore[arg-type]
                )
                return reply.choices[0].message.content or ""

        answers = await asyncio.gather(*(one(q) for q in questions[:n]))
        await client.close()
        if not all(answers):
            raise SystemExit("raw SDK: an empty answer")

    asyncio.run(main())


def _lm_eval(
    url: str, export: Path, task: str, n: int, concurrency: int, out: Path | None = None
) -> None:
    """lm-eval over the export's first ``n`` cases; every one must be scored. With ``out``,
    its results and per-sample log are written there, as ``lm_eval --output_path out
    --log_samples`` does."""
    import lm_eval
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.tasks import TaskManager

    model_args = {
        "model": MODEL,
        "base_url": f"{url}/chat/completions",
        "num_concurrent": concurrency,
        "max_retries": 2,
        "tokenized_requests": False,
    }
    results = lm_eval.simple_evaluate(
        model="local-chat-completions",
        model_args=model_args,
        tasks=[task],
        task_manager=TaskManager(include_path=str(export), include_defaults=False),
        apply_chat_template=True,
        limit=n,
        log_samples=out is not None,
        evaluation_tracker=EvaluationTracker(output_path=str(out)) if out else None,
    )
    if results is None or results["n-samples"][task]["effective"] != n:
        raise SystemExit(f"lm-eval did not score {n} cases: {results and results['n-samples']}")
    if out is not None:
        samples = results.pop("samples")
        tracker = EvaluationTracker(output_path=str(out))
        tracker.save_results_aggregated(results=results, samples=samples)
        tracker.save_results_samples(task_name=task, samples=samples[task])
    if results["results"][task]["exact_match,flexible-extract"] < 0.99:
        raise SystemExit(f"lm-eval: answers not extracted: {results['results'][task]}")


def _context(url: str, home: Path) -> Any:
    from benchbook.services.context import local_admin_context
    from benchbook.settings import Settings
    from benchbook.store.engine import make_engine, migrate

    engine = make_engine(url)
    migrate(engine)
    settings = Settings(database_url=url, home=home, work_root=home / "work", sandbox=False)
    return local_admin_context(engine, settings)


def _register(ctx: Any, rows: Path, n: int, server_url: str) -> list[Any]:
    """gsm8k@1.0.0 (``n`` generated rows) and the ``openai`` harness; the cases."""
    from benchbook.contracts.harness import OpenAIHarness
    from benchbook.services import endpoints, imports
    from benchbook.services.harnesses import register_harness
    from benchbook.services.resolve import resolve_version
    from benchbook.services.runs import iter_cases

    request = imports.parse_import_request({"benchmark": "gsm8k", "limit": n})
    imports.import_benchmark(ctx, request, rows)
    harness = {"id": HARNESS, "version": "1.0.0", "kind": "openai"}
    harness["config"] = {"base_url": server_url, "model": MODEL}  # type: ignore[assignment]
    endpoints.add_endpoint(ctx, "bench-server", server_url)
    register_harness(ctx, OpenAIHarness.model_validate(harness))
    with ctx.engine.connect() as conn:
        row = resolve_version(conn, ctx.workspace, "gsm8k", "1.0.0")
        return [case for _, case in iter_cases(conn, row.pk)]


def _run(ctx: Any, n: int, concurrency: int) -> None:
    """One Benchbook run over the first ``n`` cases; every case must end ``ok`` and pass."""
    from benchbook.contracts.run import RunSettings, StartRunRequest
    from benchbook.services import scorecards
    from benchbook.services.run_execution import execute_run
    from benchbook.services.runs import start_run

    settings = RunSettings(concurrency=concurrency, limit=n)
    request = StartRunRequest(dataset="gsm8k", harness=HARNESS, settings=settings)
    done = execute_run(ctx, start_run(ctx, request).id)
    counts = done.counts
    if done.status != "finished" or counts.done != n or counts.error:
        raise SystemExit(
            f"run {done.id}: {done.status}, {counts.done}/{n} done, {counts.error} errors"
        )
    card = scorecards.get_scorecard(ctx, done.scorecard_id or "")
    if card.passed != n:
        raise SystemExit(f"run {done.id}: {card.passed}/{n} passed the numeric grader")


Variant = Callable[[int], None]


def _variants(
    args: argparse.Namespace, tmp: Path, url: str, dbs: dict[str, str]
) -> dict[str, Variant]:
    from benchbook.datasets.flat import write_export
    from benchbook.services.datasets import list_dataset_versions

    c = args.concurrency
    rows = write_gsm8k_like(tmp / "gsm8k.jsonl", args.n2)
    questions = _questions(args.n2)
    variants: dict[str, Variant] = {
        RAW: lambda n: _raw(url, questions, n, c, post=False),
        POST: lambda n: _raw(url, questions, n, c, post=True),
    }
    export = tmp / "hf"
    for backend, db in dbs.items():
        ctx = _context(db, tmp / f"home-{backend}")
        cases = _register(ctx, rows, args.n2, url)
        if not export.exists():
            [version] = list_dataset_versions(ctx, "gsm8k")
            write_export(cases, export, "hf", version)
            variants["lm-eval"] = lambda n: _lm_eval(url, export, TASK, n, c)
            if args.log_samples:
                logs = tmp / "lm-eval-out"
                variants["lm-eval, samples logged"] = lambda n, logs=logs: _lm_eval(
                    url, export, TASK, n, c, logs
                )
        variants[f"benchbook, {backend}"] = lambda n, ctx=ctx: _run(ctx, n, c)
    return variants


def _measure(
    variants: dict[str, Variant], rounds: int, n1: int, n2: int
) -> dict[str, dict[str, list[float]]]:
    """Per variant, the CPU ms per extra case of each timed round: ``cpu`` (the process and
    its reaped children) and ``main`` (this thread alone: the event loop's, for all but
    lm-eval's, which runs its requests on a loop of its own in this thread too)."""
    out: dict[str, dict[str, list[float]]] = {name: {"cpu": [], "main": []} for name in variants}
    for round_ in range(rounds + 1):
        for name, go in variants.items():
            cpu: dict[int, tuple[float, float]] = {}
            for n in (n1, n2):
                gc.collect()  # no measurement pays for another's garbage
                c0, t0 = _cpu_s(), time.thread_time()
                go(n)
                cpu[n] = (_cpu_s() - c0, time.thread_time() - t0)
            if round_:  # round 0 warms up (imports, caches, connections)
                for k, key in enumerate(("cpu", "main")):
                    out[name][key].append(1000 * (cpu[n2][k] - cpu[n1][k]) / (n2 - n1))
    return out


def _ratio(results: dict[str, dict[str, list[float]]], top: str, bottom: str) -> float:
    pairs = zip(results[top]["cpu"], results[bottom]["cpu"], strict=True)
    return statistics.median(a / b for a, b in pairs)


def _report(results: dict[str, dict[str, list[float]]], args: argparse.Namespace) -> None:
    print(
        f"CPU per extra case ({args.n1} → {args.n2} cases), concurrency {args.concurrency},"
        f" {args.rounds} rounds (medians); the server's CPU excluded"
    )
    for name, per in results.items():
        cpu = per["cpu"]
        line = f"  {name:<24} {statistics.median(cpu):5.2f} ms/case"
        line += f" (rounds {min(cpu):.2f}-{max(cpu):.2f}; main thread"
        line += f" {statistics.median(per['main']):.2f})"
        for base in (RAW, POST):
            if base in results and name not in (RAW, POST):
                line += f"  {_ratio(results, name, base):.2f}x {base.rsplit(' ', 1)[1]}"
        if name.startswith("benchbook") and "lm-eval" in results:
            ratio = _ratio(results, name, "lm-eval")
            verdict = "ok" if ratio <= TARGET else "MISSED"
            line += f"  {ratio:.2f}x lm-eval (target ≤{TARGET}x {verdict})"
        print(line)
    if RAW in results and POST in results:
        print(f"  the typed create over post: {_ratio(results, RAW, POST):.2f}x")


def _profile(variants: dict[str, Variant], name: str, n: int) -> None:
    chosen = next(k for k in variants if name in k)
    variants[chosen](n)  # warm: imports, caches, connections
    prof = cProfile.Profile(time.thread_time)
    prof.runcall(variants[chosen], n)
    buf = io.StringIO()
    stats = pstats.Stats(prof, stream=buf)
    stats.sort_stats("tottime").print_stats(30)
    stats.sort_stats("cumulative").print_stats("benchbook", 50)
    print(f"\n=== cProfile of {chosen}, {n} cases ===\n{buf.getvalue()}")


def main(argv: list[str] | None = None) -> None:
    """Parse options, measure every variant in alternating rounds, print the table."""
    p = argparse.ArgumentParser(prog="bench.openai_harness", description=__doc__.split("\n")[0])
    p.add_argument("--n1", type=int, default=20, help="cases of the small run")
    p.add_argument("--n2", type=int, default=220, help="cases of the large run")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--backends", default="sqlite,postgresql")
    p.add_argument(
        "--log-samples",
        action="store_true",
        help="add lm-eval writing its results and per-sample log (--log_samples)",
    )
    p.add_argument("--only", default="", help="';'-separated variant-name parts to keep")
    p.add_argument("--profile", default="", help="cProfile the first variant whose name has this")
    p.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.serve:
        _serve()
        return
    logging.disable(logging.WARNING)  # lm-eval's per-run chatter
    os.environ.setdefault("TQDM_DISABLE", "1")
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    if "postgresql" in backends:
        PG[0] = _pg_admin_url()
        if PG[0] is None:
            backends.remove("postgresql")
    load_before = os.getloadavg()
    with (
        tempfile.TemporaryDirectory(prefix="benchbook-bench-openai-") as tmp_name,
        _server() as url,
        contextlib.ExitStack() as stack,
    ):
        tmp = Path(tmp_name)
        dbs = {
            "SQLite" if b == "sqlite" else "PostgreSQL": stack.enter_context(
                database(b, tmp, "openai")
            )
            for b in backends
        }
        variants = _variants(args, tmp, url, dbs)
        keep = [s.strip() for s in args.only.split(";") if s.strip()]
        if keep:
            variants = {k: v for k, v in variants.items() if any(s in k for s in keep)}
        if args.rounds:  # 0: only --profile
            _report(_measure(variants, args.rounds, args.n1, args.n2), args)
        if args.profile:
            _profile(variants, args.profile, args.n2)
    print(
        "load average before: {:.2f} {:.2f} {:.2f}; after: {:.2f} {:.2f} {:.2f}".format(
            *load_before, *os.getloadavg()
        )
    )


if __name__ == "__main__":
    main()
