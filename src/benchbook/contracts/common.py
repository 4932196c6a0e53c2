"""Shared field types and validators for the contracts."""

from __future__ import annotations

import re
from typing import Annotated, Any
from urllib.parse import urlsplit

import semver
from pydantic import AfterValidator, BeforeValidator, ConfigDict, Field, Strict, StringConstraints
from pydantic_core import PydanticCustomError

#: Strict models: unknown fields are errors, so a typo never silently drops data. NaN and
#: infinities are errors too: JSON has no such numbers and the canonical body would hold null.
STRICT = ConfigDict(
    extra="forbid",
    frozen=False,
    str_strip_whitespace=False,
    allow_inf_nan=False,
    defer_build=True,
)
#: Models are built (core schema, validator, serializer) on first use, not at import: a
#: process pays only for the models it uses (``benchbook import`` uses a handful of ~100).
#: Every contract model carries it, through ``STRICT`` or this config alone.
LAZY = ConfigDict(defer_build=True)
#: ``STRICT`` built at class creation, for the request bodies FastAPI takes as route parameters
#: (``Recipe``, ``StartRunRequest``, ``ReportRunRequest``): a deferred model there makes
#: FastAPI's OpenAPI generation warn (pydantic ``UnsupportedFieldAttributeWarning`` on the
#: parameter's alias). ``Recipe`` is built at import by the catalog anyway.
STRICT_EAGER = ConfigDict(**{**STRICT, "defer_build": False})

RESOURCE_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
#: Versions are stored (and keyed) in 128 characters; SemVer itself has no length limit.
MAX_VERSION_CHARS = 128


def _check_resource_id(value: str) -> str:
    # fullmatch: ``$`` would also accept a trailing newline.
    if not RESOURCE_ID_RE.fullmatch(value):
        raise ValueError(
            "must be 1-128 characters of [A-Za-z0-9._-], starting with a letter or digit"
        )
    return value


def _check_semver(value: str) -> str:
    if len(value) > MAX_VERSION_CHARS or not semver.Version.is_valid(value):
        raise ValueError(
            f"{value[:40]!r} is not a SemVer 2.0.0 version of at most {MAX_VERSION_CHARS}"
            " characters (for example 1.0.0 or 1.1.0-rc.1)"
        )
    return value


def _check_http_url(value: str) -> str:
    # Parse instead of prefix-matching: a link needs an http(s) scheme and a real host.
    url = value.strip()
    try:
        parts = urlsplit(url)
        host = parts.hostname if parts.scheme.lower() in ("http", "https") else None
    except ValueError:  # malformed netloc, for example an unclosed IPv6 bracket
        host = None
    if not host or any(ch.isspace() or not ch.isprintable() for ch in host):
        raise ValueError("must be an http(s) URL with a host")
    return url


#: Unicode category Cc, exactly: C0 controls, DEL and C1 controls (a test checks every code
#: point against ``unicodedata``). One regex search instead of a category look-up per character:
#: it is the costliest Python check of a ``Case`` (1.5 of 6.6 µs a case, issue 32).
CONTROL_CHAR_RE = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _check_no_control_chars(value: str) -> str:
    # Ids are stored as raw text: PostgreSQL refuses NUL, and tabs or newlines break URLs.
    if CONTROL_CHAR_RE.search(value):
        raise ValueError("may not contain control characters (NUL, tab, newline …)")
    return value


def _check_no_nul(value: str) -> str:
    # PostgreSQL text cannot hold NUL; refuse it on every backend alike.
    if "\x00" in value:
        raise ValueError("may not contain NUL characters")
    return value


#: Hub repo ids (huggingface_hub ``validate_repo_id``): ``name`` or ``owner/name``, each part of
#: ``[A-Za-z0-9_.-]`` starting and ending with a letter or digit, at most 96 characters, never
#: ``--`` or ``..``. Anything else (``@``, ``..``, spaces, more slashes) is refused before a URL
#: is built, so no request carrying a token goes anywhere unexpected.
HF_DATASET_ID_RE = re.compile(
    r"(?:[A-Za-z0-9](?:[A-Za-z0-9_.-]{0,94}[A-Za-z0-9])?/)?[A-Za-z0-9](?:[A-Za-z0-9_.-]{0,94}[A-Za-z0-9])?"
)


def hf_dataset_id_problem(value: str) -> str | None:
    """Why ``value`` is not a Hugging Face dataset id, or None when it is one."""
    if not HF_DATASET_ID_RE.fullmatch(value) or "--" in value or ".." in value:
        return (
            "must be a Hugging Face dataset id: owner/name of letters, digits, '_', '-' and '.'"
            " (no '@', '..', '--', spaces or further '/')"
        )
    return None


def _check_hf_dataset_id(value: str) -> str:
    problem = hf_dataset_id_problem(value)
    if problem:
        raise ValueError(problem)
    return value


def _clean_tags(values: list[str]) -> list[str]:
    seen: dict[str, None] = {}
    for raw in values:
        tag = raw.strip()
        if not tag:
            raise ValueError("tags may not be empty")
        if len(tag) > 100:
            raise ValueError(f"tag {tag[:20]!r}… is longer than 100 characters")
        seen.setdefault(tag, None)
    return list(seen)


#: The pydantic error type of a rule across fields that JSON Schema cannot state (case ids unique
#: within a version, ``gold_fields`` naming metadata keys): the body contradicts itself.
#: ``validation.parse_model`` answers Conflict (409) when these are a body's only problems, so a
#: request the OpenAPI document calls valid is never a 400 for a rule the document cannot state.
CONTRADICTION = "contradiction"


def contradiction(message: str) -> PydanticCustomError:
    """The error a model validator raises for a :data:`CONTRADICTION` (``message`` verbatim)."""
    return PydanticCustomError(CONTRADICTION, message)


def schema_rule(**keywords: Any) -> Any:
    """``Annotated`` metadata stating in the JSON Schema (and so in OpenAPI) the rule a validator
    beside it enforces, e.g. ``schema_rule(pattern="^[a-z]+$")``. The validator keeps its own
    message; the keywords must say exactly what it accepts (schemathesis checks both ways)."""
    return Field(json_schema_extra=keywords)


#: JSON Schema spellings of the rules above (ECMA-262 regexes, read by OpenAPI clients).
RESOURCE_ID_PATTERN = "^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"
SEMVER_PATTERN = (
    r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)"
    r"(?:-((?:0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)"
    r"(?:\.(?:0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)
_HF_PART = "[A-Za-z0-9](?:[A-Za-z0-9_.-]{0,94}[A-Za-z0-9])?"
HF_DATASET_ID_PATTERN = rf"^(?!.*(?:--|\.\.))(?:{_HF_PART}/)?{_HF_PART}$"
#: A tag: at most 100 characters and not empty once surrounding whitespace is trimmed.
TAG_PATTERN = r"^\s*[^\s\x00\x1c-\x1f\x85](?:[^\x00]{0,98}[^\s\x00\x1c-\x1f\x85])?\s*$"
#: An http(s) URL with a host, surrounding whitespace allowed (trimmed). Hosts are stated as
#: ASCII (names, IPv4, percent-escapes): a little stricter than ``urlsplit``, never looser.
HTTP_URL_PATTERN = (
    r"^\s*[Hh][Tt][Tt][Pp][Ss]?://[A-Za-z0-9._~%!$&'()*+,;=-]+(?::[0-9]{1,5})?"
    r"(?:[/?#][^\s\x00-\x1f\x7f-\x9f]*)?\s*$"
)
#: No character of Unicode category Cc (C0 controls, DEL, C1 controls).
NO_CONTROL_PATTERN = r"^[^\x00-\x1f\x7f-\x9f]*$"
#: The characters Python's ``str.strip()`` removes (``str.isspace``), as a class body: ``\s``
#: differs between Python and ECMA-262 regexes, so rules about trimming spell it out.
PY_SPACE_CHARS = (
    r"\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
)
#: Text that is not empty once trimmed (``str.strip()``), with no NUL.
NOT_BLANK_PATTERN = rf"^[^\x00]*[^\x00{PY_SPACE_CHARS}][^\x00]*$"
#: No NUL (PostgreSQL text cannot hold it).
NO_NUL_PATTERN = r"^[^\x00]*$"


ResourceId = Annotated[
    str, AfterValidator(_check_resource_id), schema_rule(pattern=RESOURCE_ID_PATTERN)
]
"""An id that appears in URLs: 1–128 chars of ``[A-Za-z0-9][A-Za-z0-9._-]*``."""

SemVerStr = Annotated[
    str,
    AfterValidator(_check_semver),
    schema_rule(pattern=SEMVER_PATTERN, maxLength=MAX_VERSION_CHARS),
]
"""A SemVer 2.0.0 version string."""


def _check_pinned_ref(value: str) -> str:
    resource_id, at, version = value.partition("@")
    if not at:
        raise ValueError(f"{value[:40]!r} is not 'id@version' (for example my-agent@1.2.0)")
    _check_resource_id(resource_id)
    _check_semver(version)
    return value


#: ``id@version``: a resource id, ``@``, a SemVer version of at most MAX_VERSION_CHARS.
PINNED_REF_PATTERN = (
    RESOURCE_ID_PATTERN.removesuffix("$")
    + f"@(?=.{{1,{MAX_VERSION_CHARS}}}$)"
    + SEMVER_PATTERN.removeprefix("^")
)

PinnedRef = Annotated[
    str, AfterValidator(_check_pinned_ref), schema_rule(pattern=PINNED_REF_PATTERN)
]
"""``id@version`` with an exact SemVer version (``my-agent@1.2.0``), no tag or ``latest``."""

#: ``id`` or ``id@ref`` as ``services.runs.split_ref`` reads it: an id without ``@``, then
#: optionally ``@`` and a ref (a version, a tag or ``latest``) that does not end in ``@``.
ID_REF_PATTERN = r"^[^@\x00]+(?:@[^\x00]*[^@\x00])?$"

IdRef = Annotated[str, schema_rule(pattern=ID_REF_PATTERN)]
"""``id`` or ``id@ref`` (``gsm8k``, ``gsm8k@1.0.0``, ``gsm8k@baseline``); a bare id means
``latest``. Checked where it is split (``services.runs.split_ref``: InvalidInput); an id or ref
that names nothing stored is NotFound there."""

HttpUrl = Annotated[str, AfterValidator(_check_http_url), schema_rule(pattern=HTTP_URL_PATTERN)]
"""An ``http(s)`` URL; ``javascript:``, ``data:`` and other schemes are rejected."""

Tag = Annotated[str, schema_rule(pattern=TAG_PATTERN)]
ContentTags = Annotated[list[Tag], AfterValidator(_clean_tags)]
"""Content tags: trimmed, non-empty, de-duplicated keeping first-seen order."""

NonEmptyStr = Annotated[str, StringConstraints(min_length=1)]


def _json_integer(value: Any) -> Any:
    # JSON has no coercion: false is not 0 and "3" is not 3. An integral number (3.0) is an
    # integer in JSON Schema, so pydantic's own int validation goes on from here.
    if isinstance(value, bool | str | bytes | bytearray):
        raise PydanticCustomError("int_type", "Input should be a valid integer")
    return value


#: Request-body numbers and booleans take JSON's types as they are, never a coerced
#: ``false``, ``1`` or ``"3"`` (pydantic's lax mode would turn those into 0, True and 3).
#: ``JSON_INT`` goes last in ``Annotated``, after any ``Field`` bounds, so the bounds still
#: reach the JSON Schema: ``Annotated[int, Field(ge=0, le=10), JSON_INT]``.
JSON_INT = BeforeValidator(_json_integer)
JsonInt = Annotated[int, JSON_INT]
"""A JSON integer (3 or 3.0); a boolean or a string is an error."""
JsonPositiveInt = Annotated[int, Field(gt=0), JSON_INT]
"""A JSON integer > 0."""
JsonNonNegativeInt = Annotated[int, Field(ge=0), JSON_INT]
"""A JSON integer ≥ 0."""
MAX_COUNT = 2**53 - 1
"""The largest count (tokens, milliseconds) a stored trace may carry: exact in a JSON double
(JavaScript's ``Number.MAX_SAFE_INTEGER``) and far inside SQLite's and PostgreSQL's 64-bit
integers, so a reported 10**23 is a 400 naming the field, not a 500 from the database."""
JsonCount = Annotated[int, Field(ge=0, le=MAX_COUNT), JSON_INT]
"""A JSON integer from 0 to :data:`MAX_COUNT`."""
JsonFloat = Annotated[float, Strict()]
"""A JSON number (integers included); a boolean or a string is an error."""
JsonBool = Annotated[bool, Strict()]
"""A JSON ``true`` or ``false``; ``0``, ``1`` and ``"true"`` are errors."""

CaseId = Annotated[
    str,
    StringConstraints(min_length=1, max_length=512),
    AfterValidator(_check_no_control_chars),
    schema_rule(pattern=NO_CONTROL_PATTERN),
]
"""A case id: 1–512 characters, no control characters (spaces and ``/`` are fine)."""

HfDatasetId = Annotated[
    str, AfterValidator(_check_hf_dataset_id), schema_rule(pattern=HF_DATASET_ID_PATTERN)
]
"""A Hugging Face dataset id (``owner/name``) as the Hub spells them."""

TextNoNul = Annotated[str, AfterValidator(_check_no_nul), schema_rule(pattern=NO_NUL_PATTERN)]
"""Free text stored in a plain column (a description): anything but NUL."""


def _given(field: str) -> dict[str, Any]:
    return {"required": [field], "properties": {field: {"not": {"type": "null"}}}}


def exactly_one_of(**fields: str) -> dict[str, Any]:
    """JSON Schema (for ``model_config``'s ``json_schema_extra``) of a model validator's "give
    exactly one of ``fields``" (the others absent or null), so OpenAPI clients and schemathesis
    see the rule the validator enforces; ``fields`` maps each name to its JSON type
    (``spec="object"``)."""
    branches: list[dict[str, Any]] = []
    for field, kind in fields.items():
        branch: dict[str, Any] = {"required": [field], "properties": {field: {"type": kind}}}
        for other in fields:
            if other != field:
                branch["properties"][other] = {"type": "null"}
        branches.append(branch)
    return {"oneOf": branches}


def at_least_one_text_of(*fields: str) -> dict[str, Any]:
    """JSON Schema of "give at least one of the text ``fields``, not empty"."""
    return {
        "anyOf": [
            {"required": [f], "properties": {f: {"type": "string", "minLength": 1}}} for f in fields
        ]
    }


def not_both(first: str, second: str) -> dict[str, Any]:
    """JSON Schema of "give ``first`` or ``second``, not both" (either may be absent)."""
    both = _given(first)
    both["required"].append(second)
    both["properties"][second] = {"not": {"type": "null"}}
    return {"not": both}
