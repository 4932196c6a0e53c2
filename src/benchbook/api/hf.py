"""Hugging Face browsing routes (SPEC D): search datasets, list a dataset's splits and files.

Requests reach the Hub as the caller (``HF_TOKEN`` resolved requester first from secrets).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from benchbook.api.deps import ContextDep
from benchbook.api.errors import error_responses
from benchbook.contracts.common import HF_DATASET_ID_PATTERN
from benchbook.datasets.sources.hf_search import HfDatasetHit, HfFileListing, HfSplit
from benchbook.services import hf as svc

router = APIRouter(prefix="/api/benchmarks/hf", tags=["huggingface"])

Dataset = Annotated[
    str,
    Query(
        min_length=1,
        description="A dataset id, owner/name.",
        json_schema_extra={"pattern": HF_DATASET_ID_PATTERN},
    ),
]


@router.get(
    "/search",
    operation_id="search_hf_datasets",
    response_model=list[HfDatasetHit],
    responses=error_responses(400, 502),
)
def search_hf_datasets(
    ctx: ContextDep,
    q: Annotated[str, Query(description="Text to find in dataset ids.")] = "",
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
) -> list[HfDatasetHit]:
    """Hub datasets matching ``q`` (id, gated, downloads, likes, last modified)."""
    return svc.search_hf_datasets(ctx, q, limit)


@router.get(
    "/splits",
    operation_id="list_hf_splits",
    response_model=list[HfSplit],
    responses=error_responses(400, 404, 502),
)
def list_hf_splits(ctx: ContextDep, dataset: Dataset) -> list[HfSplit]:
    """The ``{config, split}`` pairs the dataset viewer serves; 502 for gated datasets without
    access (the message says where to set ``HF_TOKEN``), 404 for unknown datasets."""
    return svc.list_hf_splits(ctx, dataset)


@router.get(
    "/files",
    operation_id="list_hf_files",
    response_model=HfFileListing,
    responses=error_responses(400, 404, 502),
)
def list_hf_files(
    ctx: ContextDep, dataset: Dataset, revision: Annotated[str, Query(min_length=1)] = "main"
) -> HfFileListing:
    """The dataset's files at ``revision`` (resolved commit sha), root files first."""
    return svc.list_hf_files(ctx, dataset, revision)
