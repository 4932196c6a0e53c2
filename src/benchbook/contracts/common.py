"""Shared field types and validators for the contracts."""

from __future__ import annotations

import re
import unicodedata
from typing import Annotated
from urllib.parse import urlsplit

import semver
from pydantic import AfterValidator, ConfigDict, StringConstraints

#: Strict models: unknown fields are errors, so a typo never silently drops data. NaN and
#: infinities are errors too: JSON has no such numbers and the canonical body would hold null.
STRICT = ConfigDict(extra="forbid", frozen=False, str_strip_whitespace=False, allow_inf_nan=False)

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


def _check_no_control_chars(value: str) -> str:
    # Ids are stored as raw text: PostgreSQL refuses NUL, and tabs or newlines break URLs.
    if any(unicodedata.category(ch) == "Cc" for ch in value):
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


ResourceId = Annotated[str, AfterValidator(_check_resource_id)]
"""An id that appears in URLs: 1–128 chars of ``[A-Za-z0-9][A-Za-z0-9._-]*``."""

SemVerStr = Annotated[str, AfterValidator(_check_semver)]
"""A SemVer 2.0.0 version string."""

HttpUrl = Annotated[str, AfterValidator(_check_http_url)]
"""An ``http(s)`` URL; ``javascript:``, ``data:`` and other schemes are rejected."""

ContentTags = Annotated[list[str], AfterValidator(_clean_tags)]
"""Content tags: trimmed, non-empty, de-duplicated keeping first-seen order."""

NonEmptyStr = Annotated[str, StringConstraints(min_length=1)]

CaseId = Annotated[
    str, StringConstraints(min_length=1, max_length=512), AfterValidator(_check_no_control_chars)
]
"""A case id: 1–512 characters, no control characters (spaces and ``/`` are fine)."""

HfDatasetId = Annotated[str, AfterValidator(_check_hf_dataset_id)]
"""A Hugging Face dataset id (``owner/name``) as the Hub spells them."""

TextNoNul = Annotated[str, AfterValidator(_check_no_nul)]
"""Free text stored in a plain column (a description): anything but NUL."""
