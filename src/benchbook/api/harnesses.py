"""Harness routes (SPEC H.1): register, list, get and delete harness versions.

Each route's ``operation_id`` is the service function's name (``services.registry.OPERATIONS``).
"""

from __future__ import annotations

from fastapi import APIRouter

from benchbook.api import registered
from benchbook.contracts.harness import Harness, HarnessRegisterResult, HarnessSummary
from benchbook.transports import nouns

router = APIRouter(prefix="/api/harnesses", tags=["harnesses"])

HARNESSES = registered.NounRoutes(
    ops=nouns.HARNESSES,
    path="",
    model=Harness,
    result=HarnessRegisterResult,
    summary=HarnessSummary,
    docs={
        "register": (
            "Register a harness version (admins only: a harness is code the server runs): 201"
            " when\nstored, 200 when the identical version existed, 409 naming ``id@version`` on"
            " different\ncontent, 400 for an invalid config (unknown template fields included)."
        ),
        "list": "Harnesses the caller sees: own ids plus ``_shared`` ids not shadowed by own ones.",
        "get": "One harness version (exact SemVer or ``latest``).",
        "delete": "Tombstone one exact version of your workspace; runs that used it stay readable.",
    },
)
registered.mount(router, HARNESSES)
