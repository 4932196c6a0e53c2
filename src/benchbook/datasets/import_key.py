"""The import key: what decides an identical re-import from a file's sha256, without reading
or building its rows (issue 32).

A version imported from a local file is recorded with the key of everything that shaped its
rows; importing the same file again with the same key registers nothing without reading it.
Any change to a part rebuilds the rows (and records the new key when the content is the same):

- ``meta``: the version's canonical metadata without its number (dataset id, description,
  provenance: recipe id and version, origin, scoring, the source file's name and sha256);
- ``recipe``: the whole recipe applied (source with split/config overrides, mapping, grader
  templates) and how it was reached (``via``);
- ``options``: the request's row ``limit``, ``format`` and the source limits in bytes;
- ``hook``: the catalog entry's per-case hook and file reader, by name and source text;
- ``code``: sha256 of the source files of ``benchbook/datasets/`` and ``benchbook/contracts/``
  (mapping, templates, sources, catalog, canonical bodies, the Case contract), so an edited
  checkout invalidates without a version bump; ``benchbook``: ``benchbook.__version__``;
- ``libraries``: the versions of orjson, pydantic, pydantic-core and pyarrow, and Python's.

When a part cannot be read (no source file beside an installed module), there is no key and the
import reads its rows as always (fail closed).
"""

from __future__ import annotations

import hashlib
import inspect
import platform
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

import orjson

import benchbook

#: Distributions whose version changes how rows parse, validate or serialize.
LIBRARIES = ("orjson", "pydantic", "pydantic-core", "pyarrow")
#: Packages (under ``benchbook/``) whose source shapes an imported row.
CODE_PACKAGES = ("datasets", "contracts")


@cache
def code_digest() -> str | None:
    """sha256 (hex) of every ``.py`` file under :data:`CODE_PACKAGES`, by relative path; None
    when they cannot be read. Computed once a process (~2 ms)."""
    root = Path(benchbook.__file__).parent
    digest = hashlib.sha256()
    try:
        for package in CODE_PACKAGES:
            for path in sorted((root / package).rglob("*.py")):
                digest.update(str(path.relative_to(root)).encode() + b"\0")
                digest.update(path.read_bytes() + b"\0")
    except OSError:
        return None
    return digest.hexdigest()


@cache
def library_versions() -> dict[str, str | None]:
    """``{distribution: version or None when absent}`` of :data:`LIBRARIES`, plus ``python``."""
    found: dict[str, str | None] = {"python": platform.python_version()}
    for name in LIBRARIES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return found


def code_identity(fn: Any) -> str | None:
    """``module.qualname`` and the sha256 of the source text of a hook or reader (None: none).

    Raises:
        OSError: its source cannot be read (the caller then has no key).
    """
    if fn is None:
        return None
    target = getattr(fn, "__func__", fn)
    name = f"{getattr(target, '__module__', '?')}.{getattr(target, '__qualname__', repr(target))}"
    try:
        text = inspect.getsource(target)
    except TypeError as exc:  # a builtin or an instance without source
        raise OSError(f"no source for {name}") from exc
    return f"{name}:{hashlib.sha256(text.encode()).hexdigest()}"


def import_key(
    *,
    meta: dict[str, Any],
    recipe: dict[str, Any],
    via: str,
    options: dict[str, Any],
    hook: Any,
    file_reader: Any,
) -> str | None:
    """The import key (sha256 hex) of these parts (see the module docstring), or None when a
    part cannot be read. ``meta`` must carry the source file's sha256 (``produced_by.source``)."""
    try:
        hooks = {"hook": code_identity(hook), "file_reader": code_identity(file_reader)}
    except OSError:
        return None
    code = code_digest()
    if code is None:
        return None
    parts = {
        "meta": {k: v for k, v in meta.items() if k != "version"},
        "recipe": recipe,
        "via": via,
        "options": options,
        "hook": hooks,
        "code": code,
        "benchbook": benchbook.__version__,
        "libraries": library_versions(),
    }
    return hashlib.sha256(orjson.dumps(parts, option=orjson.OPT_SORT_KEYS)).hexdigest()
