"""SemVer 2.0.0 ordering, ``latest`` resolution, version bumps and version-tag rules (SPEC B).

Precedence follows semver.org §11 via the ``semver`` package: ``1.2.0 < 1.9.0 < 1.10.0`` and a
prerelease sorts below its release (``1.1.0-rc.1 < 1.1.0``).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from typing import Literal

import semver

from benchbook.contracts.common import MAX_VERSION_CHARS
from benchbook.errors import InvalidInput

Bump = Literal["patch", "minor", "major"]
LATEST = "latest"
MAX_TAG_CHARS = 60
MAX_TAGS_PER_VERSION = 20


def parse_version(version: str) -> semver.Version:
    """Parse a SemVer string of at most 128 chars. Raises InvalidInput naming the bad value."""
    try:
        if len(version) > MAX_VERSION_CHARS:  # the registry keys versions by 128 chars
            raise ValueError(version)
        return semver.Version.parse(version)
    except (ValueError, TypeError) as exc:
        raise InvalidInput(
            f"version {version[:40]!r} is not a SemVer 2.0.0 version of at most"
            f" {MAX_VERSION_CHARS} characters (for example 1.0.0 or 1.1.0-rc.1)",
            {"errors": [{"path": "version", "message": "not a SemVer 2.0.0 version"}]},
        ) from exc


def is_semver(text: str) -> bool:
    """True when ``text`` is a valid SemVer 2.0.0 string."""
    return bool(semver.Version.is_valid(text))


def sort_versions(versions: Iterable[str]) -> list[str]:
    """Versions in ascending SemVer precedence."""
    return sorted(versions, key=semver.Version.parse)


def pick_latest(versions: Iterable[str]) -> str | None:
    """The highest release by precedence; a prerelease only when no release exists."""
    parsed = [semver.Version.parse(v) for v in versions]
    releases = [v for v in parsed if not v.prerelease]
    pool = releases or parsed
    return str(max(pool)) if pool else None


def bump_version(existing: Iterable[str], bump: Bump) -> str:
    """The next version after the highest existing one; ``1.0.0`` when there is none."""
    parsed = [semver.Version.parse(v) for v in existing]
    if not parsed:
        return "1.0.0"
    top = max(parsed)
    if bump == "major":
        return str(top.bump_major())
    if bump == "minor":
        return str(top.bump_minor())
    if top.prerelease:  # 1.1.0-rc.1 → patch bump finalizes to 1.1.0
        return str(top.finalize_version())
    return str(top.bump_patch())


def clean_version_tags(tags: Iterable[str]) -> list[str]:
    """Trim and de-duplicate version tags, enforcing the rules of SPEC B.

    Raises InvalidInput when a tag is empty, has a control character, is longer than 60 chars,
    equals ``latest``, is a valid SemVer string, or when more than 20 tags are given.
    """
    out: dict[str, None] = {}
    for raw in tags:
        tag = raw.strip()
        problem = None
        if not tag:
            problem = "a tag may not be empty"
        elif any(unicodedata.category(ch) == "Cc" for ch in tag):
            problem = f"tag {tag[:20]!r} contains a control character"
        elif len(tag) > MAX_TAG_CHARS:
            problem = f"tag {tag[:20]!r}… is longer than {MAX_TAG_CHARS} characters"
        elif tag == LATEST:
            problem = "'latest' is reserved and cannot be a tag"
        elif is_semver(tag):
            problem = f"tag {tag!r} is a SemVer version and would be ambiguous"
        if problem:
            raise InvalidInput(problem, {"errors": [{"path": "tags", "message": problem}]})
        out.setdefault(tag, None)
    if len(out) > MAX_TAGS_PER_VERSION:
        raise InvalidInput(f"at most {MAX_TAGS_PER_VERSION} tags per version, got {len(out)}")
    return list(out)
