"""SemVer ordering, ``latest``, bumps and version-tag rules (SPEC B) as pure functions."""

from __future__ import annotations

import pytest

from benchbook.datasets.versions import (
    bump_version,
    clean_version_tags,
    parse_version,
    pick_latest,
    sort_versions,
)
from benchbook.errors import InvalidInput


def test_versions_sort_by_semver_precedence_not_by_text() -> None:
    assert sort_versions(["1.10.0", "1.2.0", "1.9.0"]) == ["1.2.0", "1.9.0", "1.10.0"]


def test_a_prerelease_sorts_below_its_release() -> None:
    assert sort_versions(["1.1.0", "1.1.0-rc.2", "1.1.0-rc.1", "1.0.0"]) == [
        "1.0.0",
        "1.1.0-rc.1",
        "1.1.0-rc.2",
        "1.1.0",
    ]


def test_latest_is_the_highest_release() -> None:
    assert pick_latest(["1.2.0", "1.10.0", "1.9.0"]) == "1.10.0"


def test_latest_skips_a_prerelease_above_the_highest_release() -> None:
    assert pick_latest(["1.0.0", "2.0.0-rc.1"]) == "1.0.0"


def test_latest_is_a_prerelease_only_when_no_release_exists() -> None:
    assert pick_latest(["1.0.0-alpha", "1.0.0-rc.1", "0.9.0-beta"]) == "1.0.0-rc.1"


def test_latest_of_nothing_is_none() -> None:
    assert pick_latest([]) is None


@pytest.mark.parametrize(
    ("existing", "bump", "expected"),
    [
        ([], "minor", "1.0.0"),
        (["1.0.0"], "patch", "1.0.1"),
        (["1.0.0", "1.9.0"], "minor", "1.10.0"),
        (["1.10.0", "1.9.0"], "major", "2.0.0"),
        (["1.1.0-rc.1"], "patch", "1.1.0"),
    ],
)
def test_a_bump_starts_from_the_highest_existing_version(
    existing: list[str], bump: str, expected: str
) -> None:
    assert bump_version(existing, bump) == expected  # type: ignore[arg-type]


def test_parse_version_names_the_bad_value() -> None:
    with pytest.raises(InvalidInput) as err:
        parse_version("1.0")
    assert "'1.0'" in err.value.message
    assert err.value.details["errors"][0]["path"] == "version"


def test_version_tags_are_trimmed_and_deduplicated() -> None:
    assert clean_version_tags([" prod ", "baseline", "prod"]) == ["prod", "baseline"]


@pytest.mark.parametrize(
    ("tag", "why"),
    [
        ("latest", "reserved"),
        (" latest ", "reserved"),
        ("1.0.0", "SemVer"),
        ("2.0.0-rc.1", "SemVer"),
        ("x" * 61, "longer than 60"),
        ("", "empty"),
        ("   ", "empty"),
    ],
)
def test_a_bad_version_tag_is_rejected_with_the_reason(tag: str, why: str) -> None:
    with pytest.raises(InvalidInput) as err:
        clean_version_tags(["ok", tag])
    assert why in err.value.message


def test_a_tag_of_exactly_60_characters_is_accepted() -> None:
    assert clean_version_tags(["x" * 60]) == ["x" * 60]


def test_twenty_tags_are_accepted_and_twenty_one_are_rejected() -> None:
    assert len(clean_version_tags([f"t{i}" for i in range(20)])) == 20
    with pytest.raises(InvalidInput) as err:
        clean_version_tags([f"t{i}" for i in range(21)])
    assert "at most 20" in err.value.message


def test_duplicates_do_not_count_toward_the_tag_limit() -> None:
    assert len(clean_version_tags([f"t{i % 20}" for i in range(40)])) == 20


@pytest.mark.parametrize("tag", ["nul\x00", "tab\tinside", "bell\x07"])
def test_a_version_tag_with_a_control_character_is_rejected(tag: str) -> None:
    with pytest.raises(InvalidInput) as err:
        clean_version_tags([tag])
    assert "control character" in err.value.message
