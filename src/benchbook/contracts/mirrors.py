"""Mirror contracts (SPEC H.3, issue 12 item 4): the local git mirrors checkouts come from."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, NonNegativeInt

from benchbook.contracts.common import STRICT


class Mirror(BaseModel):
    """One bare repository of the cache, ``BENCHBOOK_HOME/mirrors/<host>/<owner>/<name>.git``.

    Attributes:
        repo: ``owner/name``; ``host`` the git host (``github.com``).
        url: the https URL a case's ``env.source.git`` names to be checked out from it.
        path: the repository on the server's disk.
        commits: commits reachable from its refs; ``refs`` how many refs it has.
        shallow: True when some commit's parents are absent (a single-commit bundle).
        size_bytes: bytes on disk; ``updated_at`` newest file change (UTC).
    """

    model_config = STRICT
    repo: str
    host: str
    url: str
    path: str
    commits: NonNegativeInt
    refs: NonNegativeInt
    shallow: bool
    size_bytes: NonNegativeInt
    updated_at: datetime


class MirrorResult(BaseModel):
    """What ``add_mirror`` did: the mirror after seeding; ``created`` False when it existed
    and was fetched into."""

    model_config = STRICT
    mirror: Mirror
    created: bool
