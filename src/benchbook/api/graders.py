"""Registered grader and environment recipe routes (issue 27 item 2): register, list, get and
delete versions. Admins register (a grader or recipe is code the server runs); members name
them from plans and cases. Each ``operation_id`` is the service function's name.
"""

from __future__ import annotations

from fastapi import APIRouter

from benchbook.api import registered
from benchbook.contracts.registered import (
    EnvironmentRecipe,
    RegisteredGrader,
)
from benchbook.transports import nouns

router = APIRouter(prefix="/api", tags=["graders"])

TOMBSTONE = "Tombstone one exact version of your workspace."

GRADERS = registered.NounRoutes(
    ops=nouns.GRADERS,
    path="/graders",
    model=RegisteredGrader,
    docs={
        "register": (
            "Register a grader version (admins only): 201 when stored, 200 when the identical\n"
            "version existed, 409 on different content."
        ),
        "list": "Registered graders: own ids plus ``_shared`` ids not shadowed by own ones.",
        "get": "One registered grader version (exact SemVer or ``latest``).",
        "delete": TOMBSTONE,
    },
)
ENVIRONMENTS = registered.NounRoutes(
    ops=nouns.ENVIRONMENTS,
    path="/environments",
    model=EnvironmentRecipe,
    docs={
        "register": (
            "Register an environment recipe version (admins only): setup commands and an"
            ' optional\ntest command a repo case names as ``env.setup = "id@version"``.'
        ),
        "list": "Environment recipes: own ids plus ``_shared`` ids not shadowed by own ones.",
        "get": "One environment recipe version (exact SemVer or ``latest``).",
        "delete": TOMBSTONE,
    },
)
registered.mount(router, GRADERS)
registered.mount(router, ENVIRONMENTS)
