"""Harness contracts (SPEC H.1): the agent under evaluation, registered like a dataset.

A harness is ``{id, version, description?, kind, config}`` — immutable and versioned exactly like
datasets (identity = SHA-256 of the canonical JSON of the parsed model, defaults filled). The
``config`` shape depends on ``kind``:

- ``command`` — :class:`CommandConfig`: a process started per (case, sample).
- ``openai`` — :class:`OpenAIConfig`: one chat-completions call per (case, sample) through the
  official ``openai`` client against any OpenAI-compatible endpoint.
- ``python`` — :class:`PythonConfig`: ``package.module:function`` called with the
  :class:`~benchbook.contracts.run.CaseInput`.
- ``agent`` — :class:`AgentConfig`: Benchbook's own tool-calling loop over an OpenAI-compatible
  endpoint; every tool runs in the case's sandbox (``runtime/harnesses/agent/``).
- ``external`` — :class:`ExternalConfig`: a harness run outside Benchbook whose results are
  reported (``report_run``) and graded here; it is never executed by the server.

Registering a harness is code execution on the server (``harnesses:write``, admin only).
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, Field, JsonValue

from benchbook.contracts.common import (
    JSON_INT,
    PY_SPACE_CHARS,
    STRICT,
    HttpUrl,
    JsonFloat,
    JsonPositiveInt,
    NonEmptyStr,
    ResourceId,
    SemVerStr,
    TextNoNul,
    schema_rule,
)

HarnessKind = Literal["command", "openai", "python", "agent", "external"]

#: The template fields a harness config may use (SPEC H.1); ``{{``/``}}`` are literal braces.
TEMPLATE_FIELDS = ("task", "case_id", "workdir", "sample")
_SPACE = f"[{PY_SPACE_CHARS}]"
#: JSON Schema of a harness template, as ``runtime.templates.compile_harness_template``
#: accepts it: literal text without single braces, ``{{`` and ``}}``, and placeholders
#: ``{field}`` / ``{field?}`` of :data:`TEMPLATE_FIELDS` (spaces around the name allowed).
HARNESS_TEMPLATE_PATTERN = (
    r"^(?:\{\{|\}\}|\{"
    + _SPACE
    + "*(?:"
    + "|".join(TEMPLATE_FIELDS)
    + ")"
    + _SPACE
    + r"*\??\}|[^{}])*$"
)
HarnessTemplate = Annotated[str, schema_rule(pattern=HARNESS_TEMPLATE_PATTERN)]
"""A harness template string (checked when the harness is registered, see
:data:`HARNESS_TEMPLATE_PATTERN`)."""

_SECRET_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
_CALLABLE_RE = re.compile(
    r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*"
)


def _check_secret_name(value: str) -> str:
    if not _SECRET_NAME_RE.fullmatch(value):
        raise ValueError(f"{value!r} is not a secret name ([A-Za-z_][A-Za-z0-9_]*)")
    return value


def _check_callable(value: str) -> str:
    if not _CALLABLE_RE.fullmatch(value):
        raise ValueError(f"{value!r} is not 'package.module:function'")
    return value


SecretName = Annotated[
    str, AfterValidator(_check_secret_name), schema_rule(pattern=f"^{_SECRET_NAME_RE.pattern}$")
]
CallablePath = Annotated[
    str, AfterValidator(_check_callable), schema_rule(pattern=f"^{_CALLABLE_RE.pattern}$")
]


class CommandConfig(BaseModel):
    """A ``command`` harness (SPEC H.1).

    Attributes:
        argv: the program and its arguments, each a template over ``{task}``, ``{case_id}``,
            ``{workdir}``, ``{sample}``; at least one element.
        cwd: working directory template; default the case's private workdir.
        env: extra environment variables, values are templates.
        secrets: names of secrets passed as environment variables of the same name (resolved
            requester first: the user's secret, else the workspace's).
        answer: where the answer is read: the process's ``stdout`` (trimmed) or the file named
            by ``BENCHBOOK_ANSWER_FILE``.
        timeout_s: per-case timeout in seconds, overriding the case's and the run's.
        network: what the sandboxed process may reach (``docs/security.md``): ``none`` (the
            default: a private network namespace, nothing but its own loopback) or ``full``
            (the host's network, loopback services included — only for a harness an admin
            trusts with it). Left out of the harness's identity when ``none``, so harnesses
            registered before the field existed keep their hash.
    """

    model_config = STRICT
    argv: list[Annotated[HarnessTemplate, Field(min_length=1)]] = Field(min_length=1)
    cwd: HarnessTemplate | None = None
    env: dict[str, HarnessTemplate] = Field(default_factory=dict)
    secrets: list[SecretName] = Field(default_factory=list)
    answer: Literal["stdout", "file"] = "stdout"
    timeout_s: JsonPositiveInt | None = None
    # Left out of a dump when "none": harnesses registered before the field keep their hash.
    network: Literal["none", "full"] = Field(default="none", exclude_if=lambda v: v == "none")


class OpenAIConfig(BaseModel):
    """An ``openai`` harness: one chat completion per (case, sample) (SPEC H.1).

    Attributes:
        base_url: the endpoint's API root (``https://api.openai.com/v1`` or any compatible one).
        model: the model name sent in the request and used to price its usage.
        api_key_secret: name of the secret holding the API key (requester first); without it
            the key ``"EMPTY"`` is sent (local servers need none).
        system: an optional system message.
        temperature: sampling temperature; omitted from the request when None.
        max_tokens: completion token cap; omitted when None.
        extra_body: extra JSON fields merged into the request body.
        max_retries: the ``openai`` client's retries (429 honours ``Retry-After``, 5xx back off).
        timeout_s: the client's request timeout in seconds.
    """

    model_config = STRICT
    base_url: HttpUrl
    model: NonEmptyStr
    api_key_secret: SecretName | None = None
    system: str | None = None
    temperature: Annotated[JsonFloat, Field(ge=0, le=2)] | None = None
    max_tokens: JsonPositiveInt | None = None
    extra_body: dict[str, JsonValue] = Field(default_factory=dict)
    max_retries: Annotated[int, Field(ge=0, le=10), JSON_INT] = 2
    timeout_s: JsonPositiveInt = 600


AgentTool = Literal[
    "bash", "python", "read_file", "write_file", "edit_file", "list_dir", "browser", "submit"
]
"""A tool the ``agent`` harness offers the model (``runtime/harnesses/agent/tools.py``)."""
#: The tools an ``agent`` harness offers when its config names none (``browser`` is opt-in).
DEFAULT_AGENT_TOOLS: tuple[AgentTool, ...] = (
    "bash", "python", "read_file", "write_file", "edit_file", "list_dir", "submit",
)  # fmt: skip


def _check_agent_tools(tools: list[AgentTool]) -> list[AgentTool]:
    if "submit" not in tools:
        raise ValueError("the tools must include 'submit': it is how the agent answers")
    if len(set(tools)) != len(tools):
        raise ValueError("each tool may be named once")
    return tools


class AgentConfig(BaseModel):
    """An ``agent`` harness: the chat-completions tool-calling loop, tools run in the sandbox.

    Same endpoint fields as :class:`OpenAIConfig` (``base_url``, ``model``, ``api_key_secret``),
    so the checks on registered model endpoints cover both kinds.

    Attributes:
        base_url, model, api_key_secret, temperature, extra_body, max_retries, timeout_s: as for
            :class:`OpenAIConfig` (``timeout_s``: seconds per model request).
        system: the system prompt; None: the template of the case's environment kind
            (``runtime/harnesses/agent/prompts.py``).
        tools: the tools offered (each once; ``submit`` required).
        max_steps: model requests at most (1–1000); past it the case ends with ``limit: steps``.
        message_limit: messages in the conversation at most (system, user, assistant, tool).
        token_limit: input + output tokens summed over the case's requests at most.
        time_limit_s: wall seconds for the whole loop; the case's ``timeout_s`` bounds it too.
        max_tokens: completion tokens per request; omitted when None.
        tool_timeout_s: seconds one ``bash``/``python`` call may run before it is killed.
        tool_output_bytes: bytes of a tool's output the model sees (head and tail kept, the cut
            said).
        file_bytes: bytes a file tool reads or writes at most.
        network: the tools' network: ``none`` (default, loopback only) or ``full``.
    """

    model_config = STRICT
    base_url: HttpUrl
    model: NonEmptyStr
    api_key_secret: SecretName | None = None
    system: str | None = None
    tools: Annotated[
        list[AgentTool],
        AfterValidator(_check_agent_tools),
        # The document states both rules the validator enforces (schemathesis holds it to it).
        schema_rule(contains={"const": "submit"}, uniqueItems=True),
    ] = Field(default_factory=lambda: list(DEFAULT_AGENT_TOOLS), min_length=1)
    max_steps: Annotated[int, Field(ge=1, le=1000), JSON_INT]
    message_limit: Annotated[int, Field(ge=2, le=100_000), JSON_INT] | None = None
    token_limit: JsonPositiveInt | None = None
    time_limit_s: JsonPositiveInt | None = None
    temperature: Annotated[JsonFloat, Field(ge=0, le=2)] | None = None
    max_tokens: JsonPositiveInt | None = None
    extra_body: dict[str, JsonValue] = Field(default_factory=dict)
    max_retries: Annotated[int, Field(ge=0, le=10), JSON_INT] = 2
    timeout_s: JsonPositiveInt = 600
    tool_timeout_s: Annotated[int, Field(ge=1, le=3600), JSON_INT] = 120
    tool_output_bytes: Annotated[int, Field(ge=256, le=1 << 20), JSON_INT] = 16384
    file_bytes: Annotated[int, Field(ge=1024, le=16 << 20), JSON_INT] = 1 << 20
    network: Literal["none", "full"] = "none"


class PythonConfig(BaseModel):
    """A ``python`` harness: ``callable`` is ``package.module:function``, called as
    ``f(case_input) -> str | HarnessOutput`` (sync or async)."""

    model_config = STRICT
    callable: CallablePath


class ExternalConfig(BaseModel):
    """An ``external`` harness: nothing to run; ``url`` optionally says where it lives."""

    model_config = STRICT
    url: str | None = None


class _HarnessBase(BaseModel):
    model_config = STRICT
    id: ResourceId
    version: SemVerStr
    description: TextNoNul | None = None


class CommandHarness(_HarnessBase):
    """A harness of kind ``command``."""

    kind: Literal["command"] = "command"
    config: CommandConfig


class OpenAIHarness(_HarnessBase):
    """A harness of kind ``openai``."""

    kind: Literal["openai"] = "openai"
    config: OpenAIConfig


class PythonHarness(_HarnessBase):
    """A harness of kind ``python``."""

    kind: Literal["python"] = "python"
    config: PythonConfig


class AgentHarness(_HarnessBase):
    """A harness of kind ``agent`` (Benchbook's tool-calling loop)."""

    kind: Literal["agent"] = "agent"
    config: AgentConfig


class ExternalHarness(_HarnessBase):
    """A harness of kind ``external`` (results reported, never executed here)."""

    kind: Literal["external"] = "external"
    config: ExternalConfig = Field(default_factory=ExternalConfig)


AnyHarness = CommandHarness | OpenAIHarness | PythonHarness | AgentHarness | ExternalHarness
Harness = Annotated[AnyHarness, Field(discriminator="kind")]
"""``{id, version, description?, kind: command|openai|python|agent|external, config}`` (SPEC
H.1)."""


class HarnessSummary(BaseModel):
    """One harness id as listed: owner workspace, latest version and all live versions."""

    model_config = STRICT
    workspace: str
    id: str
    shared: bool
    kind: HarnessKind
    latest: str
    versions: list[str]
    description: str | None = None


class HarnessRegisterResult(BaseModel):
    """``{workspace, id, version, created, content_hash}`` of a harness register."""

    model_config = STRICT
    workspace: str
    id: str
    version: str
    created: bool
    content_hash: str


def secret_names(harness: AnyHarness) -> list[str]:
    """The secret names a harness asks for (command ``secrets``, openai and agent
    ``api_key_secret``)."""
    if isinstance(harness, CommandHarness):
        return list(harness.config.secrets)
    if isinstance(harness, (OpenAIHarness, AgentHarness)) and harness.config.api_key_secret:
        return [harness.config.api_key_secret]
    return []
