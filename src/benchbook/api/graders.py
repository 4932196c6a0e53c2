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
    RegisteredSummary,
    RegisterResult,
)
from benchbook.services import environments as env_svc
from benchbook.services import graders as svc

router = APIRouter(prefix="/api", tags=["graders"])

TOMBSTONE = "Tombstone one exact version of your workspace."

GRADERS = registered.NounRoutes(
    path="/graders",
    body="grader",
    model=RegisteredGrader,
    result=RegisterResult,
    summary=RegisteredSummary,
    register=svc.register_grader,
    list=svc.list_graders,
    get=svc.get_grader,
    delete=svc.delete_grader_version,
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
    path="/environments",
    body="environment",
    model=EnvironmentRecipe,
    result=RegisterResult,
    summary=RegisteredSummary,
    register=env_svc.register_environment,
    list=env_svc.list_environments,
    get=env_svc.get_environment,
    delete=env_svc.delete_environment_version,
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
