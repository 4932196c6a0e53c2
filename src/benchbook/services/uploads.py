"""Files uploaded through the import wizard, kept in the database until an import takes them.

The wizard uploads a file once, previews it as often as the user changes column roles, then
imports it — three requests a load balancer may send to three different servers. So the file
lives in the database (``uploads`` + 1 MiB ``upload_chunks``), and each server copies it to a
private local cache the first time it needs the bytes (checked against the stored size and
SHA-256). Uploads are private to the user and workspace that sent them: anyone else gets
NotFound. Beyond :data:`MAX_UPLOADS` per user the oldest are deleted; an import that starts
from an upload takes it over (:func:`start_import_from_upload`) and it is deleted.
"""

from __future__ import annotations

import hashlib
import os
import secrets as random_source
import shutil
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from benchbook.contracts.imports import ImportRequest
from benchbook.contracts.jobs import ImportJob
from benchbook.datasets.sources.limits import SourceLimits
from benchbook.datasets.sources.task_files import zip_files
from benchbook.datasets.sources.zipped import extract_zip, is_zip_name, zip_root
from benchbook.errors import NotFound
from benchbook.services.context import Context
from benchbook.services.jobs import start_import
from benchbook.store import uploads as repo

MAX_UPLOADS = 32
CHUNK_BYTES = 1024 * 1024
_CACHE_LOCK = threading.Lock()
_CACHE: dict[int, Path] = {}


@dataclass(frozen=True)
class Upload:
    """A saved upload: its id, the file name as the user sent it, and its size in bytes."""

    id: str
    name: str
    size_bytes: int


def _cache_root() -> Path:
    """This process's private folder of local copies (made on first use)."""
    with _CACHE_LOCK:
        root = _CACHE.get(os.getpid())
        if root is None or not root.exists():
            root = Path(tempfile.mkdtemp(prefix="benchbook-uploads-"))
            _CACHE[os.getpid()] = root
        return root


def save_upload(ctx: Context, source: BinaryIO, name: str) -> Upload:
    """Store a file read from ``source`` (to its end) for preview and import.

    Args:
        source: an open binary file positioned at the start of the content.
        name: the client's file name (its extension picks the format); folders are dropped.

    Raises:
        Forbidden: without ``datasets:write``.
    """
    ctx.require("datasets:write")
    name = Path(name).name
    upload_id = "upl_" + random_source.token_hex(12)
    digest, size, seq = hashlib.sha256(), 0, 0
    with ctx.engine.begin() as conn:
        header = repo.UploadRow(
            upload_id, ctx.workspace, ctx.principal.user_id, name, 0, "", repo.now()
        )
        repo.insert_upload(conn, header)
        while chunk := source.read(CHUNK_BYTES):
            repo.insert_chunk(conn, upload_id, seq, chunk)
            digest.update(chunk)
            size, seq = size + len(chunk), seq + 1
        repo.set_content(conn, upload_id, size, digest.hexdigest())
        stale = repo.older_than_newest(conn, ctx.workspace, ctx.principal.user_id, MAX_UPLOADS)
        for old in stale:
            repo.delete_upload(conn, old)
    for old in stale:
        shutil.rmtree(_cache_root() / old, ignore_errors=True)
    return Upload(upload_id, name, size)


def save_upload_files(ctx: Context, files: Sequence[tuple[Path, str]]) -> Upload:
    """Store several files of a folder benchmark (``(local path, name as sent)``, names
    relative to what was picked: ``examples/chrome/<id>.json``) as one upload: a zip of the
    folder (``datasets/sources/task_files.py``), so previews and imports read it as
    :func:`upload_path` reads an uploaded zip — the folder ``--file`` would read.

    Raises:
        Forbidden: without ``datasets:write``. InvalidInput: an unsafe or repeated name.
    """
    ctx.require("datasets:write")
    with tempfile.TemporaryFile(prefix="benchbook-files-") as packed:
        name = zip_files(files, packed)
        packed.seek(0)
        return save_upload(ctx, packed, name)


def _owned(ctx: Context, upload_id: str) -> repo.UploadRow:
    with ctx.engine.connect() as conn:
        row = repo.get_upload(conn, upload_id)
    mine = row is not None and (row.user_id, row.workspace) == (
        ctx.principal.user_id,
        ctx.workspace,
    )
    if row is None or not mine:
        raise NotFound(f"upload {upload_id!r} not found; choose the file again", {"id": upload_id})
    return row


def _copy_out(ctx: Context, row: repo.UploadRow, target: Path) -> None:
    """Write the stored bytes to ``target`` (a temporary name, then renamed)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + f".{random_source.token_hex(4)}.part")
    digest = hashlib.sha256()
    with ctx.engine.connect() as conn, partial.open("wb") as out:
        for chunk in repo.iter_chunks(conn, row.id):
            out.write(chunk)
            digest.update(chunk)
    if partial.stat().st_size != row.size_bytes or digest.hexdigest() != row.sha256:
        partial.unlink(missing_ok=True)
        raise NotFound(f"upload {row.id!r} is incomplete; choose the file again", {"id": row.id})
    os.replace(partial, target)


def upload_path(ctx: Context, upload_id: str) -> tuple[Path, str]:
    """A local copy of the caller's upload and its file name (copied from the database the
    first time this process needs it); a ``.zip`` is the folder it unpacks to and that folder's
    name (``datasets/sources/zipped.py``).

    Raises:
        NotFound: unknown upload, or someone else's.
    """
    row = _owned(ctx, upload_id)
    target = _cache_root() / row.id / row.name
    if not target.exists():
        _copy_out(ctx, row, target)
    if not is_zip_name(row.name):
        return target, row.name
    folder = _cache_root() / row.id / "unzipped"
    if folder.exists():
        return zip_root(folder, row.name)
    return extract_zip(target, folder, row.name, SourceLimits.from_settings(ctx.settings))


def start_import_from_upload(
    ctx: Context, request: ImportRequest, upload_id: str | None
) -> ImportJob:
    """Start the import job (``services.jobs.start_import``); an upload is handed over to it
    (a fresh local copy the job owns and deletes; a ``.zip``, the folder it unpacks to) and
    removed from the database.

    Raises:
        NotFound: unknown upload, or someone else's. Forbidden: as ``start_import``.
    """
    if upload_id is None:
        return start_import(ctx, request)
    row = _owned(ctx, upload_id)
    handed = _cache_root() / f"{row.id}-{row.name}"  # the job's; row.name names the format
    _copy_out(ctx, row, handed)
    name = row.name
    if is_zip_name(name):  # a zipped folder benchmark: the job gets the folder
        limits = SourceLimits.from_settings(ctx.settings)
        try:
            root, name = extract_zip(handed, _cache_root() / f"{row.id}-dir", name, limits)
        finally:
            handed.unlink(missing_ok=True)
        handed = _cache_root() / f"{row.id}-{name}"
        os.replace(root, handed)
        shutil.rmtree(_cache_root() / f"{row.id}-dir", ignore_errors=True)
    job = start_import(ctx, request, handed, name, own_file=True)
    with ctx.engine.begin() as conn:
        repo.delete_upload(conn, row.id)
    shutil.rmtree(_cache_root() / row.id, ignore_errors=True)
    return job
