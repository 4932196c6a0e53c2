"""Browsing Hugging Face from Benchbook (SPEC D): search datasets, list splits, list files.

Each operation needs ``datasets:read`` and reaches the Hub as the requester: ``HF_TOKEN`` from
the requester's secret, else the workspace's, else the environment
(:func:`services.imports.hf_hub_for`), so gated datasets the user has access to are listed.
The wire work lives in ``datasets/sources/hf_search.py``.
"""

from __future__ import annotations

from benchbook.contracts.common import hf_dataset_id_problem
from benchbook.datasets.sources import hf_search
from benchbook.datasets.sources.hf_search import HfDatasetHit, HfFileListing, HfSplit
from benchbook.errors import InvalidInput
from benchbook.services.context import Context
from benchbook.services.imports import hf_hub_for


def _dataset_name(dataset: str) -> str:
    """``dataset`` trimmed; InvalidInput (path ``dataset``) unless it is a Hub dataset id,
    before any request (which may carry the requester's token) is made."""
    name = dataset.strip()
    problem = hf_dataset_id_problem(name)
    if problem:
        raise InvalidInput(
            f"dataset {dataset[:80]!r} is not a Hugging Face dataset id (owner/name): {problem}",
            {"errors": [{"path": "dataset", "message": problem}]},
        )
    return name


def search_hf_datasets(ctx: Context, q: str, limit: int = 20) -> list[HfDatasetHit]:
    """Hub datasets whose id matches ``q``, at most ``limit`` (1–100), in the Hub's order.

    Raises:
        UpstreamError: Hugging Face unreachable or refusing.
    """
    ctx.require("datasets:read")
    return hf_search.search_hf_datasets(hf_hub_for(ctx), q.strip(), limit)


def list_hf_splits(ctx: Context, dataset: str) -> list[HfSplit]:
    """Every ``{config, split}`` the dataset viewer serves for ``dataset`` (``owner/name``).

    Raises:
        NotFound: unknown dataset. UpstreamError: gated without access (with where to set
        ``HF_TOKEN``), unreachable, or the viewer does not serve it. InvalidInput: a
        loading-script dataset or a malformed id.
    """
    ctx.require("datasets:read")
    return hf_search.list_hf_splits(hf_hub_for(ctx), _dataset_name(dataset))


def list_hf_files(ctx: Context, dataset: str, revision: str = "main") -> HfFileListing:
    """Every file of ``dataset`` at ``revision`` (resolved to its commit sha), root files first,
    each with its size in bytes and data format when readable (csv, jsonl, json, parquet).

    Raises:
        NotFound: unknown dataset or revision. UpstreamError: gated, unreachable or refused.
    """
    ctx.require("datasets:read")
    return hf_search.list_hf_files(hf_hub_for(ctx), _dataset_name(dataset), revision)
