"""Shared field types and validators for the contracts."""

from __future__ import annotations

import re
from typing import Annotated

import semver
from pydantic import AfterValidator, ConfigDict, StringConstraints

#: Strict models: unknown fields are errors, so a typo never silently drops data.
STRICT = ConfigDict(extra="forbid", frozen=False, str_strip_whitespace=False)

RESOURCE_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def _check_resource_id(value: str) -> str:
    if not RESOURCE_ID_RE.match(value):
        raise ValueError(
            "must be 1-128 characters of [A-Za-z0-9._-], starting with a letter or digit"
        )
    return value


def _check_semver(value: str) -> str:
    if not semver.Version.is_valid(value):
        raise ValueError(
            f"{value!r} is not a SemVer 2.0.0 version (for example 1.0.0 or 1.1.0-rc.1)"
        )
    return value


def _check_http_url(value: str) -> str:
    low = value.strip().lower()
    if not (low.startswith("http://") or low.startswith("https://")) or len(low) <= len("https://"):
        raise ValueError("must be an http(s) URL")
    return value.strip()


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
