"""The import wizard's Hugging Face calls: search the Hub, then open one dataset's sources.

- ``GET /import/hf/search?q=`` → ``[HfDatasetHit]`` (``services.hf.search_hf_datasets``, ≤ 20)
- ``GET /import/hf/source?dataset=owner/name`` → ``{dataset, viewer, splits, files}``: the
  config/split pairs the dataset viewer serves (``list_hf_splits``); when the viewer does not
  serve the dataset, ``viewer`` is false and ``files`` lists its readable data files
  (``list_hf_files``: csv, jsonl, json, parquet; root first) with the resolved ``revision``.

Errors are the API's JSON envelope: a gated dataset without a usable token is ``upstream_error``
whose ``details.secret`` is ``HF_TOKEN`` (the wizard then links to the secrets page).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response
from fastapi.responses import JSONResponse

from benchbook.datasets.sources.hf_hub import ViewerUnavailable
from benchbook.services import hf
from benchbook.web.errors import JsonRoute
from benchbook.web.session import PageDep

calls = APIRouter(route_class=JsonRoute, include_in_schema=False)

SEARCH_LIMIT = 20


@calls.get("/import/hf/search")
def search(page: PageDep, q: str = "") -> Response:
    """Hub datasets whose id matches ``q`` (at most 20, the Hub's order); empty ``q`` → []."""
    if not q.strip():
        return JSONResponse([])
    hits = hf.search_hf_datasets(page.ctx, q, SEARCH_LIMIT)
    return JSONResponse([h.model_dump(mode="json") for h in hits])


@calls.get("/import/hf/source")
def source(page: PageDep, dataset: str) -> Response:
    """What the wizard can import from ``dataset``: viewer splits, else readable files."""
    out: dict[str, Any] = {"dataset": dataset, "viewer": True, "splits": [], "files": []}
    try:
        out["splits"] = [s.model_dump() for s in hf.list_hf_splits(page.ctx, dataset)]
    except ViewerUnavailable:
        listing = hf.list_hf_files(page.ctx, dataset)
        out["viewer"] = False
        out["revision"] = listing.revision
        out["files"] = [f.model_dump() for f in listing.files if f.format]
    return JSONResponse(out)
