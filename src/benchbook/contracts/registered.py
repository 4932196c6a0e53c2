"""Registered code (issue 27 item 2): graders and environment recipes admins register.

Only what an admin registered is code. A case or a run plan written by a member may *name* a
registered item but may not carry a command of its own:

- :class:`RegisteredGrader` ``{id, version, description?, kind: command, config: {cmd | argv,
  pass_pattern?, timeout_s?}}`` — named from a ``command`` or ``tests-pass`` grader spec as
  ``config.grader = "id@version"`` (or ``id`` for ``latest``).
- :class:`EnvironmentRecipe` ``{id, version, description?, setup: [command], test_cmd?}`` —
  named by a repo case as ``env.setup = "id@version"`` (a string instead of a list of
  commands); its ``test_cmd`` is the command ``tests-pass`` runs for that case.

Both are immutable and versioned like harnesses (identity = SHA-256 of the canonical JSON of
the parsed model), with the ``_shared`` tier for installation admins.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from benchbook.contracts.common import (
    STRICT,
    STRICT_EAGER,
    JsonPositiveInt,
    NonEmptyStr,
    ResourceId,
    SemVerStr,
    TextNoNul,
)

RegisteredNoun = Literal["grader", "environment"]


#: JSON Schema of :class:`GraderCommand`'s rule: ``cmd`` (text) or ``argv`` (a list), not both.
ONE_COMMAND: dict[str, Any] = {
    "oneOf": [
        {"required": ["cmd"], "properties": {"cmd": {"type": "string"}, "argv": {"type": "null"}}},
        {"required": ["argv"], "properties": {"argv": {"type": "array"}, "cmd": {"type": "null"}}},
    ]
}


class GraderCommand(BaseModel):
    """A registered ``command`` grader's command (as the inline ``command`` grader's config).

    Attributes:
        cmd: a shell command line (``/bin/sh -c``); exactly one of ``cmd`` and ``argv``.
        argv: the program and its arguments, no shell.
        pass_pattern: a Python regex searched in stdout and stderr; absent: pass = exit 0.
        timeout_s: seconds before the process group is killed (default 600).
    """

    model_config = ConfigDict(**STRICT, json_schema_extra=ONE_COMMAND)
    cmd: NonEmptyStr | None = None
    argv: list[NonEmptyStr] | None = Field(default=None, min_length=1)
    pass_pattern: str | None = None
    timeout_s: JsonPositiveInt = 600

    @model_validator(mode="after")
    def _one_command(self) -> GraderCommand:
        if (self.cmd is None) == (self.argv is None):
            raise ValueError("give exactly one of config.cmd and config.argv")
        return self


class RegisteredGrader(BaseModel):
    """``{id, version, description?, kind: command, config}`` (module docstring). Built
    eagerly: FastAPI takes it as a route body."""

    model_config = STRICT_EAGER
    id: ResourceId
    version: SemVerStr
    description: TextNoNul | None = None
    kind: Literal["command"] = "command"
    config: GraderCommand


class EnvironmentRecipe(BaseModel):
    """``{id, version, description?, setup, test_cmd?}``: the setup commands a repo case runs
    (``/bin/sh -c`` each, in order, before the harness) and its test command for
    ``tests-pass`` (text → shell, list → argv). Built eagerly: a route body."""

    model_config = STRICT_EAGER
    id: ResourceId
    version: SemVerStr
    description: TextNoNul | None = None
    setup: list[NonEmptyStr] = Field(default_factory=list)
    test_cmd: NonEmptyStr | list[NonEmptyStr] | None = None


class RegisteredSummary(BaseModel):
    """One registered id as listed: owner workspace, latest version, all live versions."""

    model_config = STRICT
    workspace: str
    id: str
    shared: bool
    latest: str
    versions: list[str]
    description: str | None = None


class RegisterResult(BaseModel):
    """``{workspace, id, version, created, content_hash}`` of a register."""

    model_config = STRICT
    workspace: str
    id: str
    version: str
    created: bool
    content_hash: str


class Endpoint(BaseModel):
    """A registered model endpoint (issue 27 item 3): judges' and ``openai`` harnesses'
    ``base_url`` must start with one. ``workspace`` is ``_shared`` for the installation's."""

    model_config = STRICT
    workspace: str
    name: str
    url: str
    shared: bool
    created_by: str


__all__ = [
    "Endpoint",
    "EnvironmentRecipe",
    "GraderCommand",
    "RegisterResult",
    "RegisteredGrader",
    "RegisteredNoun",
    "RegisteredSummary",
]
