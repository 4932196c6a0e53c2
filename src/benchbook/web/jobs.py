"""Files uploaded through the import wizard, held until an import takes them over.

The wizard uploads a file once, then previews it as often as the user changes column roles, then
imports it. Files are spooled to a private temporary directory and referenced by an upload id;
``services.jobs.start_import(own_file=True)`` takes the file over when the import starts (and
deletes it when the job ends). Uploads are private to the user and workspace that sent them:
anyone else gets NotFound. The oldest beyond :data:`MAX_UPLOADS` are deleted.
"""

from __future__ import annotations

import secrets as random_source
import shutil
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

from benchbook.contracts.imports import ImportRequest
from benchbook.contracts.jobs import ImportJob
from benchbook.errors import NotFound
from benchbook.services.context import Context
from benchbook.services.jobs import start_import

MAX_UPLOADS = 32


@dataclass
class Upload:
    """A file saved for preview and import: ``path`` on disk, ``name`` as the user sent it."""

    owner: tuple[str, str]
    path: Path
    name: str
    size_bytes: int


@dataclass
class Uploads:
    """Uploads by id, guarded by one lock."""

    root: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="benchbook-web-")))
    items: dict[str, Upload] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def new_folder(self) -> tuple[str, Path]:
        """A fresh upload id and the directory to save its file in."""
        upload_id = "upl_" + random_source.token_hex(12)
        folder = self.root / upload_id
        folder.mkdir(parents=True)
        return upload_id, folder

    def add(self, upload_id: str, upload: Upload) -> None:
        """Keep an upload; the oldest beyond ``MAX_UPLOADS`` are deleted."""
        with self.lock:
            self.items[upload_id] = upload
            while len(self.items) > MAX_UPLOADS:
                gone = self.items.pop(next(iter(self.items)))
                shutil.rmtree(gone.path.parent, ignore_errors=True)

    def get(self, ctx: Context, upload_id: str) -> Upload:
        """The caller's upload. Raises NotFound (also for someone else's)."""
        with self.lock:
            found = self.items.get(upload_id)
        if found is None or found.owner != owner_of(ctx) or not found.path.exists():
            raise NotFound(f"upload {upload_id!r} not found; choose the file again")
        return found

    def start(self, ctx: Context, request: ImportRequest, upload_id: str | None) -> ImportJob:
        """Start the import job; an upload is handed over to it (and forgotten here)."""
        if upload_id is None:
            return start_import(ctx, request)
        upload = self.get(ctx, upload_id)
        job = start_import(ctx, request, upload.path, upload.name, own_file=True)
        with self.lock:
            self.items.pop(upload_id, None)
        return job


def owner_of(ctx: Context) -> tuple[str, str]:
    """Who an upload belongs to: ``(user id, workspace)``."""
    return ctx.principal.user_id, ctx.workspace


UPLOADS = Uploads()
