"""The client's operations as :class:`~benchbook.client._calls.Call` values: the one place
each route, its parameters and its answer's contract are named. Both clients send these."""

from __future__ import annotations

from typing import Any

from benchbook.client._calls import Call, model, seg, split_ref
from benchbook.contracts import Case, DatasetDiff
from benchbook.contracts.comparison import Comparison
from benchbook.contracts.dataset import Dataset, GraderSpec
from benchbook.contracts.imports import ImportRequest
from benchbook.contracts.jobs import ImportJob
from benchbook.contracts.registry import DatasetPage, DatasetView, RegisterResult, VersionInfo
from benchbook.contracts.run import (
    CaseResult,
    ReportedResult,
    ReportRunRequest,
    Run,
    RunSettings,
    StartRunRequest,
)
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
