"""A zip of task files (issue 14): an uploaded folder benchmark (OSWorld's ``examples/``).

:func:`extract_zip` unpacks it into a folder for :class:`~benchbook.datasets.sources.folder.
FolderSource`. Rules:

- Entries whose path is absolute, holds ``..`` or a backslash are refused (InvalidInput naming
  the entry); macOS metadata (``__MACOSX/``, ``._*``) is skipped.
- Everything inflates to at most ``limits.decompressed_bytes`` (counted while copying, not
  trusted from the headers): past it, PayloadTooLarge naming the zip.
- When every entry sits below one top-level folder (a zipped ``examples/``), that folder is the
  root, so relative paths (and OSWorld's ``chrome/<id>`` ids) equal reading the folder itself.
"""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path, PurePosixPath

from benchbook.datasets.sources.limits import SourceLimits
from benchbook.errors import InvalidInput, PayloadTooLarge

CHUNK_BYTES = 1 << 20


def is_zip_name(name: str) -> bool:
    """Whether a file name names a zip (``.zip``, any case)."""
    return name.lower().endswith(".zip")


def safe_parts(name: str, zip_name: str) -> tuple[str, ...] | None:
    """The entry's path parts, None for metadata to skip; InvalidInput for an unsafe path."""
    path = PurePosixPath(name)
    if name.startswith("/") or "\\" in name or ".." in path.parts:
        message = f"{zip_name}: entry {name!r} has an unsafe path"
        raise InvalidInput(message, {"errors": [{"path": name, "message": "unsafe path"}]})
    if path.parts and (path.parts[0] == "__MACOSX" or path.name.startswith("._")):
        return None
    return path.parts


def extract_zip(path: Path, target: Path, zip_name: str, limits: SourceLimits) -> tuple[Path, str]:
    """Unpack the zip at ``path`` into the new folder ``target``.

    Returns:
        ``(root folder, its name)``: ``target`` itself, or the single top-level folder inside it;
        the name is that folder's, else ``zip_name`` without ``.zip``.

    Raises:
        InvalidInput: not a zip, no files, or an unsafe entry path.
        PayloadTooLarge: the files inflate past ``limits.decompressed_bytes``.
    """
    try:
        with zipfile.ZipFile(path) as archive:
            written = _copy_entries(archive, target, zip_name, limits.decompressed_bytes)
    except zipfile.BadZipFile as exc:
        shutil.rmtree(target, ignore_errors=True)
        raise InvalidInput(f"{zip_name}: not a readable zip file ({exc})") from exc
    except BaseException:
        shutil.rmtree(target, ignore_errors=True)
        raise
    if not written:
        shutil.rmtree(target, ignore_errors=True)
        raise InvalidInput(f"{zip_name}: the zip holds no files")
    return zip_root(target, zip_name)


def zip_root(target: Path, zip_name: str) -> tuple[Path, str]:
    """The root of an extracted zip: its single top-level folder when it holds nothing else,
    else ``target``; named after that folder, else the zip without ``.zip``."""
    entries = list(target.iterdir())
    if len(entries) == 1 and entries[0].is_dir():
        return entries[0], entries[0].name
    return target, zip_name[: -len(".zip")] if is_zip_name(zip_name) else zip_name


def _copy_entries(
    archive: zipfile.ZipFile, target: Path, zip_name: str, max_bytes: int
) -> list[tuple[str, ...]]:
    total = 0
    written: list[tuple[str, ...]] = []
    for info in archive.infolist():
        parts = safe_parts(info.filename, zip_name)
        if parts is None or info.is_dir() or not parts:
            continue
        out_path = target.joinpath(*parts)
        out_path.parent.mkdir(parents=True, exist_ok=True)
        with archive.open(info) as src, out_path.open("wb") as out:
            while chunk := src.read(CHUNK_BYTES):
                total += len(chunk)
                if total > max_bytes:
                    raise PayloadTooLarge(
                        f"{zip_name}: the files inflate past {max_bytes:,} bytes"
                        " (BENCHBOOK_MAX_DECOMPRESSED_BYTES)",
                        {"limit_bytes": max_bytes},
                    )
                out.write(chunk)
        written.append(parts)
    return written
