"""The Hub routes of the fake server: repo info, search, tree listing and ``resolve`` downloads,
with the headers and ``X-Error-Code`` values ``huggingface_hub`` branches on
(``../shared/data/hf-api-shapes.md`` part B)."""

from __future__ import annotations

import hashlib
from typing import Any
from urllib.parse import quote, urlencode

from .model import PARQUET_REVISION, FakeDataset, fake_sha
from .wire import Reply, json_reply


def hub_error(status: int, code: str | None, message: str) -> Reply:
    """An error reply with the message in the body and in ``X-Error-Message``."""
    headers = {"X-Error-Message": message}
    if code:
        headers["X-Error-Code"] = code
    return json_reply({"error": message}, status, headers)


def missing_repo(token: str | None) -> Reply:
    """Anonymous callers cannot tell missing from private: 401; authenticated ones get 404."""
    if token is None:
        return hub_error(401, "RepoNotFound", "Invalid username or password.")
    return hub_error(404, "RepoNotFound", "Repository not found")


def gate(ds: FakeDataset, token: str | None) -> Reply | None:
    """None when the caller may read files; else the Hub's 401/403 ``GatedRepo`` answer."""
    if not ds.gated or (token is not None and token == ds.token):
        return None
    if token is None:
        return hub_error(
            401,
            "GatedRepo",
            f"Access to dataset {ds.repo_id} is restricted. You must have access to it and be "
            "authenticated to access it. Please log in.",
        )
    return hub_error(
        403,
        "GatedRepo",
        f"Access to dataset {ds.repo_id} is restricted and you are not in the authorized list. "
        f"Visit https://huggingface.co/datasets/{ds.repo_id} to ask for access.",
    )


def files_at(ds: FakeDataset, revision: str) -> tuple[str, dict[str, bytes]] | None:
    """``(commit sha, files)`` at ``revision`` (``main``, a sha of ``main`` or ``history``, or
    the Parquet export)."""
    if revision in ("main", ds.sha):
        return ds.sha, ds.files
    if revision in ds.history:
        return revision, ds.history[revision]
    if revision == PARQUET_REVISION and ds.parquet:
        return fake_sha(ds.repo_id + PARQUET_REVISION), ds.parquet_files()
    return None


def info_reply(ds: FakeDataset | None, revision: str, token: str | None) -> Reply:
    """``/api/datasets/{id}[/revision/{rev}]``: readable even when gated (files are not)."""
    if ds is None:
        return missing_repo(token)
    found = files_at(ds, revision)
    if found is None:
        return hub_error(404, "RevisionNotFound", f"Invalid rev id: {revision}")
    sha, files = found
    return json_reply(
        {
            "_id": sha[:24],
            "id": ds.repo_id,
            "author": ds.repo_id.split("/")[0],
            "sha": sha,
            "lastModified": "2026-05-02T10:11:12.000Z",
            "private": False,
            "gated": ds.gated,
            "disabled": False,
            "downloads": 0,
            "likes": 0,
            "tags": [],
            "cardData": {},
            "siblings": [{"rfilename": p} for p in sorted(files)],
        }
    )


def search_reply(datasets: dict[str, FakeDataset], query: dict[str, str]) -> Reply:
    """``/api/datasets?search=…&limit=…``: a plain array of repo summaries."""
    needle = query.get("search", "").lower()
    limit = int(query.get("limit", "1000"))
    hits = [
        {
            "_id": ds.sha[:24],
            "id": ds.repo_id,
            "author": ds.repo_id.split("/")[0],
            "gated": ds.gated,
            "private": False,
            "downloads": 0,
            "likes": 0,
            "tags": [],
            "lastModified": "2026-05-02T10:11:12.000Z",
        }
        for ds in datasets.values()
        if needle in ds.repo_id.lower()
    ]
    return json_reply(hits[:limit])


def _tree_entries(files: dict[str, bytes], path: str, recursive: bool) -> list[dict[str, Any]]:
    prefix = f"{path.strip('/')}/" if path.strip("/") else ""
    dirs: set[str] = set()
    entries: list[dict[str, Any]] = []
    for name in sorted(files):
        if not name.startswith(prefix):
            continue
        rest = name[len(prefix) :].split("/")
        for depth in range(1, len(rest)):
            if recursive or depth == 1:
                dirs.add(prefix + "/".join(rest[:depth]))
        if recursive or len(rest) == 1:
            data = files[name]
            blob = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
            entries.append({"type": "file", "oid": blob, "size": len(data), "path": name})
    folders = [
        {"type": "directory", "oid": fake_sha(d), "size": 0, "path": d} for d in sorted(dirs)
    ]
    return folders + entries


def tree_reply(
    ds: FakeDataset | None,
    revision: str,
    path: str,
    query: dict[str, str],
    token: str | None,
    self_url: str,
    page_size: int,
) -> Reply:
    """``/api/datasets/{id}/tree/{rev}[/{path}]``: an array, paged with a ``Link`` header."""
    if ds is None:
        return missing_repo(token)
    found = files_at(ds, revision)
    if found is None:
        return hub_error(404, "RevisionNotFound", f"Invalid rev id: {revision}")
    recursive = query.get("recursive", "false").lower() == "true"
    entries = _tree_entries(found[1], path, recursive)
    if path.strip("/") and not entries:
        return hub_error(404, "EntryNotFound", f"Entry not found: {path}")
    start = int(query.get("cursor", "0"))
    page = entries[start : start + page_size]
    headers = {}
    if start + page_size < len(entries):
        next_query = {k: v for k, v in query.items() if k != "cursor"}
        next_query["cursor"] = str(start + page_size)
        headers["Link"] = f'<{self_url}?{urlencode(next_query)}>; rel="next"'
    return json_reply(page, 200, headers)


def resolve_reply(ds: FakeDataset | None, revision: str, path: str, token: str | None) -> Reply:
    """``/datasets/{id}/resolve/{rev}/{path}``: bytes plus ETag / X-Repo-Commit / Content-Length."""
    if ds is None:
        return missing_repo(token)
    denied = gate(ds, token)
    if denied is not None:
        return denied
    found = files_at(ds, revision)
    if found is None:
        return hub_error(404, "RevisionNotFound", f"Invalid rev id: {revision}")
    sha, files = found
    if path not in files:
        return hub_error(404, "EntryNotFound", f"Entry not found: {quote(path)}")
    data = files[path]
    etag = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
    headers = {
        "Content-Type": "application/octet-stream",
        "ETag": f'"{etag}"',
        "X-Repo-Commit": sha,
        "Accept-Ranges": "bytes",
    }
    return Reply(200, data, headers)
