"""The dataset-viewer routes of the fake server (``/is-valid``, ``/splits``, ``/first-rows``,
``/rows``, ``/info``, ``/size``, ``/parquet``), shapes and error texts from
``../shared/data/hf-api-shapes.md`` part A."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from .model import PARQUET_REVISION, FakeDataset
from .wire import Reply, json_reply

NOT_ACCESSIBLE = (
    "The dataset does not exist, or is not accessible without authentication (private or gated). "
    "Please check the spelling of the dataset name or retry with authentication."
)
BLOCKED = (
    "The parquet conversion has been disabled for this dataset for now. Please open an issue in "
    "https://github.com/huggingface/dataset-viewer if you want this dataset to be supported."
)
SCRIPT = (
    "The dataset viewer doesn't support this dataset because it runs arbitrary Python code. "
    "You can convert it to a Parquet data-only dataset by using the convert_to_parquet CLI from "
    "the datasets library."
)
MAX_LENGTH = 100


def viewer_error(status: int, code: str, message: str) -> Reply:
    """An error reply with ``X-Error-Code`` and ``Cache-Control: no-store``."""
    return json_reply({"error": message}, status, {"X-Error-Code": code})


def access_error(ds: FakeDataset | None, token: str | None) -> Reply | None:
    """401 without a token, 404 with one, for a missing dataset or a gated one not granted."""
    if ds is not None and (not ds.gated or (token is not None and token == ds.token)):
        return None
    if token is None:
        return viewer_error(401, "ExternalUnauthenticatedError", NOT_ACCESSIBLE)
    return viewer_error(404, "ExternalAuthenticatedError", NOT_ACCESSIBLE)


def handle_viewer(
    route: str, query: dict[str, str], ds: FakeDataset | None, token: str | None, hub_url: str
) -> Reply:
    """Answer one viewer request; ``ds`` is the dataset named by ``?dataset=`` (None if unknown)."""
    if not query.get("dataset"):
        return viewer_error(422, "MissingRequiredParameter", "Parameter 'dataset' is required")
    denied = access_error(ds, token)
    if denied is not None:
        return denied
    assert ds is not None
    if route == "is-valid":
        flag = ds.viewer and not ds.script
        return json_reply(
            {k: flag for k in ("preview", "viewer", "search", "filter", "statistics")}
        )
    if ds.script:
        return viewer_error(501, "DatasetWithScriptNotSupportedError", SCRIPT)
    if not ds.viewer:
        return viewer_error(501, "DatasetInBlockListError", BLOCKED)
    headers = {"X-Revision": ds.viewer_sha}
    handlers = {
        "splits": splits_reply,
        "rows": rows_reply,
        "first-rows": rows_reply,
        "info": info_reply,
        "size": size_reply,
    }
    if route == "parquet":
        return parquet_reply(ds, query, hub_url)
    if route not in handlers:
        return viewer_error(404, "UnexpectedError", "Not found.")
    reply = handlers[route](ds, query, route)
    reply.headers.update(headers)
    return reply


def splits_reply(ds: FakeDataset, query: dict[str, str], route: str) -> Reply:
    config = query.get("config")
    items = [
        {"dataset": ds.repo_id, "config": c, "split": s}
        for c, s in ds.splits
        if config is None or c == config
    ]
    if config is not None:
        return (
            json_reply({"splits": items})
            if items
            else viewer_error(404, "ResponseNotFound", "Not found.")
        )
    return json_reply({"splits": items, "pending": [], "failed": []})


def _feature_list(ds: FakeDataset, config: str) -> list[dict[str, Any]]:
    return [
        {"feature_idx": i, "name": name, "type": ftype}
        for i, (name, ftype) in enumerate(ds.config_features(config).items())
    ]


def _int_param(query: dict[str, str], name: str, default: int) -> int | Reply:
    raw = query.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        return viewer_error(422, "InvalidParameter", f"Parameter '{name}' must be integer")
    if value < 0:
        return viewer_error(422, "InvalidParameter", f"Parameter '{name}' must be positive")
    return value


def rows_reply(ds: FakeDataset, query: dict[str, str], route: str) -> Reply:
    """``/rows`` (paged, absolute ``row_idx``) and ``/first-rows`` (first 100)."""
    for name in ("config", "split"):
        if not query.get(name):
            return viewer_error(422, "MissingRequiredParameter", f"Parameter '{name}' is required")
    key = (query["config"], query["split"])
    if key not in ds.splits:
        return viewer_error(404, "ResponseNotFound", "Not found.")
    if route == "rows":
        fault = ds.take_fault()
        if fault is not None:
            return _fault_reply(fault)
    offset = _int_param(query, "offset", 0)
    length = _int_param(query, "length", MAX_LENGTH)
    if isinstance(offset, Reply):
        return offset
    if isinstance(length, Reply):
        return length
    if length > MAX_LENGTH:
        return viewer_error(
            422, "InvalidParameter", "Parameter 'length' must not be greater than 100"
        )
    if route == "first-rows":
        offset, length = 0, MAX_LENGTH
    elif ds.rows_fail_from is not None and offset >= ds.rows_fail_from:
        broken = _broken_page(ds)
        if broken is not None:
            return broken
        length = 0  # "short": the page stops before num_rows_total
    rows = ds.splits[key]
    count = min(length, ds.page_size, ds.short_pages.get(offset, length))
    page = []
    for i, row in enumerate(rows[offset : offset + count]):
        cells, cut = ds.truncated(row)
        page.append({"row_idx": offset + i, "row": cells, "truncated_cells": cut})
    body: dict[str, Any] = {"features": _feature_list(ds, key[0]), "rows": page}
    if route == "first-rows":
        body = {"dataset": ds.repo_id, "config": key[0], "split": key[1], **body}
        body["truncated"] = len(rows) > MAX_LENGTH
    else:
        body.update(num_rows_total=len(rows), num_rows_per_page=MAX_LENGTH, partial=False)
    return json_reply(body)


TOO_BIG = "Rows from parquet row groups are too big to be read: 538.70 MiB (max=286.10 MiB)"


def _broken_page(ds: FakeDataset) -> Reply | None:
    """The persistent failure of a page at or after ``rows_fail_from`` (None: a short page)."""
    if ds.rows_failure == "TooBigContentError":
        return viewer_error(500, "TooBigContentError", TOO_BIG)
    if ds.rows_failure == "5xx":
        return viewer_error(500, "UnexpectedError", "Unexpected error.")
    assert ds.rows_failure == "short", ds.rows_failure
    return None


def _fault_reply(status: int) -> Reply:
    if status == 429:
        return json_reply({"error": "too many requests"}, 429, {"Retry-After": "0"})
    return viewer_error(
        status,
        "ResponseNotReady",
        "The server is busier than usual and the response is not ready yet. Please retry later.",
    )


def _config_info(ds: FakeDataset, config: str) -> dict[str, Any]:
    splits = {
        s: {"name": s, "num_bytes": 0, "num_examples": len(rows), "dataset_name": None}
        for (c, s), rows in ds.splits.items()
        if c == config
    }
    return {
        "description": "",
        "citation": "",
        "homepage": "",
        "license": "",
        "features": ds.config_features(config),
        "builder_name": "json",
        "dataset_name": ds.repo_id.split("/")[-1],
        "config_name": config,
        "splits": splits,
    }


def info_reply(ds: FakeDataset, query: dict[str, str], route: str) -> Reply:
    config = query.get("config")
    if config is not None:
        if config not in ds.configs:
            return viewer_error(404, "ResponseNotFound", "Not found.")
        return json_reply({"dataset_info": _config_info(ds, config), "partial": False})
    info = {c: _config_info(ds, c) for c in ds.configs}
    return json_reply({"dataset_info": info, "pending": [], "failed": [], "partial": False})


def size_reply(ds: FakeDataset, query: dict[str, str], route: str) -> Reply:
    config = query.get("config")
    splits = [
        {
            "dataset": ds.repo_id,
            "config": c,
            "split": s,
            "num_rows": len(rows),
            "num_columns": 0,
            "num_bytes_parquet_files": 0,
            "num_bytes_memory": 0,
            "estimated_num_rows": None,
        }
        for (c, s), rows in ds.splits.items()
        if config is None or c == config
    ]
    total = sum(item["num_rows"] for item in splits)
    summary = {"dataset": ds.repo_id, "num_rows": total, "estimated_num_rows": None}
    if config is not None:
        return json_reply(
            {"size": {"config": {**summary, "config": config}, "splits": splits}, "partial": False}
        )
    return json_reply(
        {
            "size": {"dataset": summary, "configs": [], "splits": splits},
            "pending": [],
            "failed": [],
            "partial": False,
        }
    )


def parquet_reply(ds: FakeDataset, query: dict[str, str], hub_url: str) -> Reply:
    """The export listing; URLs point at the Hub ``resolve`` route of ``refs/convert/parquet``."""
    config = query.get("config")
    rev = quote(PARQUET_REVISION, safe="")
    files = [
        {
            "dataset": ds.repo_id,
            "config": path.split("/")[0],
            "split": path.split("/")[1],
            "url": f"{hub_url}/datasets/{ds.repo_id}/resolve/{rev}/{quote(path)}",
            "filename": path.split("/")[-1],
            "size": len(data),
        }
        for path, data in ds.parquet_files().items()
        if config is None or path.split("/")[0] == config
    ]
    failed = (
        []
        if ds.parquet
        else [
            {"kind": "config-info", "dataset": ds.repo_id, "config": c, "split": None}
            for c in ds.configs
        ]
    )
    body: dict[str, Any] = {
        "parquet_files": files,
        "pending": [],
        "failed": failed,
        "partial": False,
    }
    if config is not None:
        body["features"] = ds.config_features(config)
    reply = json_reply(body)
    reply.headers["X-Revision"] = ds.viewer_sha
    return reply
