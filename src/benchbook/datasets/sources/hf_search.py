"""Finding things on Hugging Face: datasets by name, a dataset's configs and splits, its files.

- ``search_hf_datasets``: Hub ``GET /api/datasets?search=<text>&limit=<n>`` (a JSON array).
- ``list_hf_splits``: viewer ``GET /splits?dataset=`` (``{"splits": [{dataset, config, split}]}``).
- ``list_hf_files``: Hub tree listing through ``huggingface_hub.HfApi.list_repo_tree`` (recursive,
  ``Link``-paged), at the commit the revision resolves to; root files first, then by path.
"""

from __future__ import annotations

from pydantic import BaseModel

from benchbook.datasets.sources.files import guess_format
from benchbook.datasets.sources.hf_hub import HfHub, repo_info


class HfDatasetHit(BaseModel):
    """One search result: the repo id and whether it is gated (False, "auto" or "manual")."""

    id: str
    gated: bool | str = False
    downloads: int | None = None
    likes: int | None = None
    last_modified: str | None = None


class HfSplit(BaseModel):
    """A config/split pair the viewer serves."""

    config: str
    split: str


class HfFile(BaseModel):
    """A repository file: ``path`` inside the repo, ``size_bytes``, data ``format`` if readable."""

    path: str
    size_bytes: int | None = None
    format: str | None = None


class HfFileListing(BaseModel):
    """Files of ``dataset`` at commit ``revision`` (root first, then by path)."""

    dataset: str
    revision: str
    files: list[HfFile]


def search_hf_datasets(hub: HfHub, text: str, limit: int = 20) -> list[HfDatasetHit]:
    """Datasets whose id matches ``text``, at most ``limit`` (1–100), in the Hub's order.

    Raises:
        UpstreamError: unreachable or refused.
    """
    limit = max(1, min(limit, 100))
    with hub.client() as client:
        body, _ = hub.get_json(
            client, f"{hub.endpoint}/api/datasets", text, {"search": text, "limit": limit}
        )
    return [
        HfDatasetHit(
            id=str(item["id"]),
            gated=item.get("gated") or False,
            downloads=item.get("downloads"),
            likes=item.get("likes"),
            last_modified=item.get("lastModified"),
        )
        for item in (body if isinstance(body, list) else [])[:limit]
        if isinstance(item, dict) and item.get("id")
    ]


def list_hf_splits(hub: HfHub, dataset: str) -> list[HfSplit]:
    """Every config/split of ``dataset`` the viewer knows, in its order.

    Raises:
        NotFound, UpstreamError, InvalidInput (loading script), ViewerUnavailable.
    """
    with hub.client() as client:
        info = repo_info(hub, client, dataset)
        body, _ = hub.get_json(
            client,
            f"{hub.viewer_endpoint}/splits",
            dataset,
            {"dataset": dataset},
            bool(info.gated),
        )
    return [
        HfSplit(config=str(item["config"]), split=str(item["split"]))
        for item in body.get("splits") or []
    ]


def root_first(path: str) -> tuple[bool, str]:
    """Sort key: files at the repository root first, then everything by path."""
    return ("/" in path, path)


def list_hf_files(hub: HfHub, dataset: str, revision: str = "main") -> HfFileListing:
    """Every file of ``dataset`` at ``revision`` (resolved to its commit sha).

    Raises:
        NotFound: unknown dataset or revision. UpstreamError: unreachable or refused.
    """
    from huggingface_hub import HfApi
    from huggingface_hub.hf_api import RepoFile

    with hub.client() as client:
        info = repo_info(hub, client, dataset, revision)
    api = HfApi(endpoint=hub.endpoint, token=hub.token or False)

    def tree() -> list[HfFile]:
        entries = api.list_repo_tree(
            dataset,
            repo_type="dataset",
            revision=info.sha,
            recursive=True,
            token=hub.token or False,
        )
        return [
            HfFile(path=e.path, size_bytes=e.size, format=guess_format(e.path))
            for e in entries
            if isinstance(e, RepoFile)
        ]

    files = sorted(hub.call_hub(dataset, tree, bool(info.gated)), key=lambda f: root_first(f.path))
    return HfFileListing(dataset=dataset, revision=info.sha, files=files)
