"""Several files sent for a folder benchmark (issue 14 item 4): OSWorld's task files picked in
the browser one by one or as a folder, or sent as several multipart ``file`` parts.

A file's name as sent is its path relative to what was picked: ``examples/chrome/<id>.json``
from a folder picker (``webkitRelativePath``), ``<id>.json`` from a plain multiple selection.
Rules:

- Names that are empty, absolute, or hold ``..`` or a backslash are refused (InvalidInput naming
  the file), as zip entries are (``zipped.safe_parts``); macOS metadata (``__MACOSX/``, ``._*``)
  is skipped; two files with the same path are refused.
- When every file sits below one top-level folder, that folder is the root and names the source,
  so a picked ``examples/`` reads exactly as ``benchbook import osworld --file examples``.
  Otherwise the files form a folder named ``files`` (:data:`LOOSE_FOLDER`).
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import IO

from benchbook.datasets.sources.zipped import safe_parts
from benchbook.errors import InvalidInput

#: The folder name of files sent without a common top-level folder.
LOOSE_FOLDER = "files"
_WHERE = "the upload"


def task_paths(names: Sequence[str]) -> tuple[list[PurePosixPath | None], str]:
    """Each name's path below the root (None: metadata to skip) and the root's folder name.

    Raises:
        InvalidInput: an empty or unsafe name, or two files at one path (the name given).
    """
    parts: list[tuple[str, ...] | None] = []
    for name in names:
        if not name.strip("/"):
            raise InvalidInput("a file was sent without a name", {"errors": [{"path": name}]})
        parts.append(safe_parts(name, _WHERE))
    kept = [p for p in parts if p]
    tops = {p[0] for p in kept}
    nested = len(tops) == 1 and all(len(p) > 1 for p in kept)
    root = next(iter(tops)) if nested else LOOSE_FOLDER
    paths = [PurePosixPath(*(p[1:] if nested else p)) if p else None for p in parts]
    seen: set[PurePosixPath] = set()
    for path in paths:
        if path is not None and path in seen:
            message = f"{_WHERE}: two files are named {path.as_posix()!r}"
            raise InvalidInput(message, {"errors": [{"path": path.as_posix(), "message": "twice"}]})
        if path is not None:
            seen.add(path)
    return paths, root


def place_files(files: Sequence[tuple[Path, str]], root: Path) -> str:
    """Move each saved file ``(temporary path, name as sent)`` to ``root/<path>``, ``root``
    being a new folder; returns the folder's name to record (``examples``, or ``files``).

    Raises:
        InvalidInput: as :func:`task_paths`; nothing is moved then.
    """
    paths, name = task_paths([sent for _, sent in files])
    root.mkdir(parents=True)
    for (saved, _), path in zip(files, paths, strict=True):
        if path is not None:
            out = root.joinpath(*path.parts)
            out.parent.mkdir(parents=True, exist_ok=True)
            os.replace(saved, out)
    return name


def zip_files(files: Sequence[tuple[Path, str]], out: IO[bytes]) -> str:
    """Write the files ``(path, name as sent)`` into a zip whose entries sit below the root
    folder, so ``zipped.extract_zip`` unpacks them into the folder :func:`place_files` builds.

    Returns:
        The archive's name, ``<root>.zip``.

    Raises:
        InvalidInput: as :func:`task_paths`.
    """
    paths, root_name = task_paths([name for _, name in files])
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for (saved, _), path in zip(files, paths, strict=True):
            if path is not None:
                archive.write(saved, f"{root_name}/{path.as_posix()}")
    return f"{root_name}.zip"
