"""The client's operations as :class:`~benchbook.client._calls.Call` values: the one place
each route, its parameters and its answer's contract are named. Both clients send these."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchbook.client._calls import Call, model, seg, split_ref
from benchbook.contracts import Case, DatasetDiff
from benchbook.contracts.comparison import Comparison
from benchbook.contracts.dataset import Dataset, GraderSpec
from benchbook.contracts.history import CaseHistoryPage, FlakyCase
from benchbook.contracts.imports import ImportRequest
from benchbook.contracts.jobs import ImportJob
from benchbook.contracts.leaderboard import Leaderboard
from benchbook.contracts.registry import DatasetPage, DatasetView, RegisterResult, VersionInfo
from benchbook.contracts.run import (
    CaseResult,
    ReportedResult,
    ReportRunRequest,
    Run,
    RunSettings,
    StartRunRequest,
)
from benchbook.contracts.run_imports import ImportedRun, ImportInspectRequest, ImportLmEvalRequest
from benchbook.contracts.scorecard import Scorecard
from benchbook.validation import parse_model

#: Cases per page when iterating (the API's maximum).
PAGE = 1000


def _version_path(ref: str) -> str:
    dataset_id, version = split_ref(ref)
    return f"/api/datasets/{seg(dataset_id)}/versions/{seg(version)}"


def list_datasets(
    search: str | None, owner: str, sort: str, limit: int, offset: int
) -> Call[DatasetPage]:
    params = {"search": search, "owner": owner, "sort": sort, "limit": limit, "offset": offset}
    return Call("GET", "/api/datasets", model(DatasetPage), params=params)


def get_dataset(ref: str, after: int | None = None, limit: int = 50) -> Call[DatasetView]:
    params = {"after": after, "limit": limit}
    return Call("GET", _version_path(ref), model(DatasetView), params=params)


def get_case(ref: str, case_id: str) -> Call[Case]:
    path = f"{_version_path(ref)}/cases/{'/'.join(seg(p) for p in case_id.split('/'))}"
    return Call("GET", path, model(Case))


def list_versions(dataset_id: str) -> Call[list[VersionInfo]]:
    return Call("GET", f"/api/datasets/{seg(dataset_id)}/versions", model(list[VersionInfo]))


def diff(dataset_id: str, base: str, candidate: str) -> Call[DatasetDiff]:
    params = {"base": base, "candidate": candidate}
    return Call("GET", f"/api/datasets/{seg(dataset_id)}/diff", model(DatasetDiff), params=params)


def register(body: bytes, shared: bool) -> Call[RegisterResult]:
    params = {"shared": "true" if shared else None}
    return Call("POST", "/api/datasets", model(RegisterResult), params=params, content=body)


def dataset_body(dataset: Dataset | dict[str, Any] | bytes) -> bytes:
    """The register body: a Dataset's JSON, a dict dumped as JSON, or bytes sent as they are."""
    if isinstance(dataset, bytes):
        return dataset
    if isinstance(dataset, Dataset):
        return dataset.model_dump_json(exclude_unset=False).encode()
    import orjson

    return orjson.dumps(dataset)


def export_path(ref: str) -> str:
    return f"{_version_path(ref)}/cases.jsonl"


def export_cases(ref: str, after: int | None = None) -> Call[None]:
    """The JSONL export of ``ref`` after the 0-based position ``after`` (read as a stream)."""
    return Call("GET", export_path(ref), lambda response: None, params={"after": after})


def start_import(request: ImportRequest | dict[str, Any]) -> Call[ImportJob]:
    body = request if isinstance(request, dict) else request.model_dump(mode="json")
    return Call("POST", "/api/imports", model(ImportJob), json=body)


def get_import(job_id: str) -> Call[ImportJob]:
    return Call("GET", f"/api/imports/{seg(job_id)}", model(ImportJob))


def start_run(
    dataset: str,
    harness: str,
    graders: list[GraderSpec] | list[dict[str, Any]] | None,
    settings: RunSettings | dict[str, Any] | None,
    preflight: bool = True,
) -> Call[Run]:
    request = parse_model(
        StartRunRequest,
        {
            "dataset": dataset,
            "harness": harness,
            "graders": graders,
            "settings": settings or {},
            "preflight": preflight,
        },
        "run request",
    )
    return Call("POST", "/api/runs", model(Run), json=request.model_dump(mode="json"))


def report_run(
    dataset: str,
    harness: str,
    results: list[ReportedResult] | list[dict[str, Any]],
    graders: list[GraderSpec] | list[dict[str, Any]] | None,
) -> Call[Run]:
    request = parse_model(
        ReportRunRequest,
        {"dataset": dataset, "harness": harness, "results": results, "graders": graders},
        "report",
    )
    return Call(
        "POST",
        "/api/runs/report",
        model(Run),
        json=request.model_dump(mode="json", exclude_none=True),
    )


def _upload(path: str, request: Any, files: list[Path]) -> Call[ImportedRun]:
    """A multipart import: the request as JSON in ``request``, each file a ``file`` part."""
    body = request.model_dump_json(exclude_none=True)
    parts = [("file", (f.name, f.read_bytes())) for f in files]
    return Call("POST", path, model(ImportedRun), data={"request": body}, files=parts)


def import_inspect_run(log: Path, request: dict[str, Any]) -> Call[ImportedRun]:
    """``POST /api/runs/import/inspect`` with the log file as the ``file`` part."""
    parsed = parse_model(ImportInspectRequest, request, "import")
    return _upload("/api/runs/import/inspect", parsed, [log])


def import_lm_eval_run(output: Path, request: dict[str, Any]) -> Call[ImportedRun]:
    """``POST /api/runs/import/lm-eval`` with ``output``'s ``samples_*.jsonl`` and
    ``results_*.json`` (found below it; or ``output`` itself when it is a samples file)."""
    parsed = parse_model(ImportLmEvalRequest, request, "import")
    if output.is_file():
        files = [output]
    else:
        files = sorted([*output.rglob("samples_*.jsonl"), *output.rglob("results_*.json")])
    return _upload("/api/runs/import/lm-eval", parsed, files)


def get_run(run_id: str) -> Call[Run]:
    return Call("GET", f"/api/runs/{seg(run_id)}", model(Run))


def list_results(
    run_id: str, after: str | None, limit: int, scorecard: str | None = None
) -> Call[list[CaseResult]]:
    params = {"after": after, "limit": limit, "scorecard": scorecard}
    return Call("GET", f"/api/runs/{seg(run_id)}/results", model(list[CaseResult]), params=params)


def list_scorecard_results(
    scorecard_id: str, after: str | None, limit: int, outcome: str | None = None
) -> Call[list[CaseResult]]:
    params = {"after": after, "limit": limit, "outcome": outcome}
    path = f"/api/scorecards/{seg(scorecard_id)}/results"
    return Call("GET", path, model(list[CaseResult]), params=params)


def requeue_run(run_id: str, what: str, budget_usd: float | None) -> Call[Run]:
    """``what``: ``resume`` or ``retry``."""
    body = {"budget_usd": budget_usd} if budget_usd is not None else None
    return Call("POST", f"/api/runs/{seg(run_id)}/{what}", model(Run), json=body)


def rescore_run(
    run_id: str, graders: list[GraderSpec] | list[dict[str, Any]], preflight: bool
) -> Call[Scorecard]:
    specs = [g.model_dump(mode="json") if isinstance(g, GraderSpec) else g for g in graders]
    body = {"graders": specs, "preflight": preflight}
    return Call("POST", f"/api/runs/{seg(run_id)}/rescore", model(Scorecard), json=body)


def get_scorecard(scorecard_id: str) -> Call[Scorecard]:
    return Call("GET", f"/api/scorecards/{seg(scorecard_id)}", model(Scorecard))


def compare(baseline: str, candidate: str, seed: int, resamples: int) -> Call[Comparison]:
    params = {"baseline": baseline, "candidate": candidate, "seed": seed, "resamples": resamples}
    return Call("GET", "/api/scorecards/compare", model(Comparison), params=params)


def get_leaderboard(
    ref: str, select: str, sort: str, tag: str | None, plan: str | None
) -> Call[Leaderboard]:
    dataset_id, version = split_ref(ref)
    params = {"version": version, "select": select, "sort": sort, "tag": tag, "plan": plan}
    path = f"/api/datasets/{seg(dataset_id)}/leaderboard"
    return Call("GET", path, model(Leaderboard), params=params)


def export_run(run_id: str, format: str, scorecard_id: str | None) -> Call[None]:
    params = {"format": format, "scorecard_id": scorecard_id}
    return Call("GET", f"/api/runs/{seg(run_id)}/export", lambda r: None, params=params)


def list_case_results(
    dataset_id: str, case_id: str, before: str | None, limit: int
) -> Call[CaseHistoryPage]:
    params = {"case_id": case_id, "before": before, "limit": limit}
    path = f"/api/datasets/{seg(dataset_id)}/case-results"
    return Call("GET", path, model(CaseHistoryPage), params=params)


def list_flaky_cases(run_id: str) -> Call[list[FlakyCase]]:
    return Call("GET", f"/api/runs/{seg(run_id)}/flaky", model(list[FlakyCase]))
