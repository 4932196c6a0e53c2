"""The first-party benchmark catalog (SPEC F): one module per benchmark family.

:data:`CATALOG` maps catalog ids to :class:`CatalogEntry`; :func:`get_entry` raises NotFound
with the known ids.
"""

from __future__ import annotations

from benchbook.datasets.catalog import osworld, qa, swebench, travel, web
from benchbook.datasets.catalog.entry import CatalogEntry
from benchbook.errors import NotFound

CATALOG: dict[str, CatalogEntry] = {
    e.id: e
    for e in [*qa.ENTRIES, *web.ENTRIES, *swebench.ENTRIES, *osworld.ENTRIES, *travel.ENTRIES]
}


def get_entry(benchmark: str) -> CatalogEntry:
    """The catalog entry ``benchmark``. Raises NotFound listing the known ids."""
    entry = CATALOG.get(benchmark)
    if entry is None:
        known = ", ".join(sorted(CATALOG))
        raise NotFound(
            f"benchmark {benchmark!r} is not in the catalog (known: {known})",
            {"id": benchmark, "known": sorted(CATALOG)},
        )
    return entry


def list_entries() -> list[CatalogEntry]:
    """Every catalog entry, sorted by id."""
    return [CATALOG[k] for k in sorted(CATALOG)]


__all__ = ["CATALOG", "CatalogEntry", "get_entry", "list_entries"]
