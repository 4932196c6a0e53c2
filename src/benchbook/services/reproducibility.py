"""The reproducibility record of a run (SPEC H.9, SPEC I), kept in ``Run.reproducibility``.

Written when the run is planned:
``{dataset_content_hash, release: {kind, file, sha256, revision, dataset} | None, harness,
harness_config_hash, plan_hash, pricing_sha256, benchbook_version, code_revision, python,
platform, executor, ray: {version, address, num_cpus} | None, scorers: {localization:
{benchbook, tree_sitter_language_pack}, swebench: version | None}}`` — ``release`` is the
imported source (for ContextBench the release parquet's sha256), ``ray`` (executor ``ray``
only) the driver's Ray version, the cluster address asked for (``auto`` when none was) and the
run's ``ray_num_cpus`` (None: derived from the cluster and the concurrency), ``scorers`` the
versions whose definitions produce the numbers.

Completed when the run ends (:func:`finish_record`): ``timings: {started_at, finished_at,
wall_ms, case_duration_ms_total}`` and, for repository environments,
``checkout_audit: {ok, failed, cases: [{case_id, sample, ok, commit, head, clean, untracked,
problems}]}`` from each trace's pre-harness audit (SPEC H.3), when the dataset's first case has a
repository environment (only then are the traces decoded; prompt runs carry no audit).
"""

from __future__ import annotations

import importlib.metadata
import platform
import subprocess
import sys
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

import orjson
from sqlalchemy import Connection

from benchbook import __version__
from benchbook.contracts.run import RunPlan, RunSettings
from benchbook.eval.plans import plan_hash
from benchbook.eval.pricing import load_pricing
from benchbook.services import traces
from benchbook.settings import Settings
from benchbook.store import datasets as dataset_repo
from benchbook.store import harnesses as harness_repo
from benchbook.store import runs as repo


@cache
def package_version(name: str) -> str | None:
    """The installed version of distribution ``name``, None when it is not installed.

    Read once per name for the process: the server's own installation does not change while
    it runs (and a run's record would otherwise cost a metadata scan per package).
    """
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def scorer_versions() -> dict[str, Any]:
    """The versions behind the localization and SWE-bench numbers."""
    return {
        "localization": {
            "benchbook": __version__,
            "tree_sitter_language_pack": package_version("tree-sitter-language-pack"),
        },
        "swebench": package_version("swebench"),
    }


def start_record(
    version: dataset_repo.VersionRow,
    hrow: harness_repo.HarnessRow,
    plan: RunPlan,
    run_settings: RunSettings,
    settings: Settings,
) -> dict[str, Any]:
    """The record written when a run is planned (module docstring).

    Raises:
        InvalidInput: the configured pricing table cannot be read.
    """
    source = (version.produced_by or {}).get("source")
    release = (
        {k: source.get(k) for k in ("kind", "file", "sha256", "revision", "dataset")}
        if isinstance(source, dict)
        else None
    )
    _, pricing_sha = load_pricing(settings.pricing_file)
    return {
        "dataset_content_hash": version.content_hash,
        "release": release,
        "harness": f"{hrow.harness_id}@{hrow.version}",
        "harness_config_hash": hrow.content_hash,
        "plan_hash": plan_hash(plan),
        "pricing_sha256": pricing_sha,
        "benchbook_version": __version__,
        "code_revision": code_revision(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "executor": run_settings.executor,
        "ray": ray_record(run_settings),
        "scorers": scorer_versions(),
    }


def ray_record(run_settings: RunSettings) -> dict[str, Any] | None:
    """``{version, address, num_cpus}`` of a ``ray`` run (module docstring); None otherwise."""
    if run_settings.executor != "ray":
        return None
    return {
        "version": package_version("ray"),
        "address": run_settings.ray_address or "auto",
        "num_cpus": run_settings.ray_num_cpus,
    }


def code_revision() -> str | None:
    """The git commit of the installed source tree, when it is a checkout."""
    return checkout_revision(Path(__file__).resolve().parents[3])


@cache
def checkout_revision(root: Path) -> str | None:
    """``git rev-parse HEAD`` of the checkout at ``root`` (None when it is none), asked once per
    root for the process: only for the server's own source tree, whose HEAD does not move
    under a running server (never for a user's repository)."""
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except OSError:
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def finish_record(
    conn: Connection, settings: Settings, run: repo.RunRow, finished_at: datetime
) -> dict[str, Any]:
    """The planned record plus timings and the per-case checkout audit (module docstring)."""
    record: dict[str, Any] = orjson.loads(run.reproducibility)
    audited = _has_repo_cases(conn, run)
    cases, total_ms = [], 0
    for r in repo.iter_results(conn, run.id, with_trace=audited):
        total_ms += r.duration_ms or 0
        if not audited or (r.trace is None and r.trace_path is None):
            continue
        audit = traces.load_trace(settings, r.trace, r.trace_path).env_snapshot.audit
        if audit is not None:
            cases.append({"case_id": r.case_id, "sample": r.sample, **audit.model_dump()})
    started = run.started_at
    if started is not None and started.tzinfo is None:  # SQLite returns naive UTC
        started = started.replace(tzinfo=UTC)
    record["timings"] = {
        "started_at": started.isoformat() if started else None,
        "finished_at": finished_at.isoformat(),
        "wall_ms": round((finished_at - started).total_seconds() * 1000) if started else None,
        "case_duration_ms_total": total_ms,
    }
    if cases:
        ok = sum(1 for c in cases if c["ok"])
        record["checkout_audit"] = {"ok": ok, "failed": len(cases) - ok, "cases": cases}
    return record


def _has_repo_cases(conn: Connection, run: repo.RunRow) -> bool:
    """Whether the run's dataset has repository environments (its first case tells): only
    those traces carry a checkout audit, so prompt runs never decode their traces here."""
    page = dataset_repo.case_page(conn, run.dataset_pk, None, 1)
    return bool(page) and orjson.loads(page[0][2]).get("env", {}).get("kind") == "repo"
