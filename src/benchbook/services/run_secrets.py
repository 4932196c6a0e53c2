"""The secrets of one run (issue 27 items 3 and 4): resolved for the run's creator on first
use, with the hosts each may be sent to, and remembered so stored results can be masked."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from sqlalchemy import Engine

from benchbook.services.secrets import secret_records_for
from benchbook.settings import Settings


class LazySecrets(Mapping[str, str]):
    """Secret values for the run's creator, resolved (requester first) on first use, with the
    hosts each is bound to (:func:`benchbook.runtime.egress.secret_for` checks them right
    before a model call). :meth:`seen` are the values handed out so far, for masking."""

    def __init__(self, engine: Engine, settings: Settings, user_id: str, workspace: str) -> None:
        self._args = (engine, settings, user_id, workspace)
        self._cache: dict[str, tuple[str, list[str]] | None] = {}

    def _record(self, name: str) -> tuple[str, list[str]]:
        if name not in self._cache:
            engine, settings, user_id, workspace = self._args
            found = secret_records_for(engine, settings, user_id, workspace, [name])
            self._cache[name] = found.get(name)
        record = self._cache[name]
        if record is None:
            raise KeyError(name)
        return record

    def __getitem__(self, name: str) -> str:
        return self._record(name)[0]

    def hosts(self, name: str) -> list[str]:
        """The hosts ``name`` may be sent to (``[]``: nowhere). Raises KeyError."""
        return self._record(name)[1]

    def seen(self) -> list[str]:
        """Every value resolved so far (for masking what is stored)."""
        return [r[0] for r in self._cache.values() if r is not None]

    def __iter__(self) -> Iterator[str]:
        return iter([k for k, v in self._cache.items() if v is not None])  # resolved ones

    def __len__(self) -> int:
        return sum(1 for v in self._cache.values() if v is not None)
