"""Dataset and Case contracts (SPEC A): ids, versions, envs, repo sources, network, uniqueness."""

from __future__ import annotations

import sys
import unicodedata
from typing import Any

import pytest
from pydantic import ValidationError

from benchbook.contracts import (
    BrowserEnv,
    Case,
    Dataset,
    FilesSource,
    GitSource,
    OsUseEnv,
    PathSource,
    PromptEnv,
    RepoEnv,
)
from benchbook.contracts.common import CONTROL_CHAR_RE


def _case(case_id: str = "c1", **extra: Any) -> dict[str, Any]:
    return {"id": case_id, "env": {"kind": "prompt"}, "task": "2+2?", **extra}


def _dataset(**extra: Any) -> dict[str, Any]:
    return {"id": "gsm8k", "version": "1.0.0", "cases": [_case()], **extra}


def _error_paths(exc: ValidationError) -> list[str]:
    return [".".join(str(p) for p in e["loc"]) for e in exc.errors()]


@pytest.mark.parametrize(
    "dataset_id",
    ["a", "A", "9", "gsm8k", "swe-bench_verified.v2", "a" * 128, "x-", "x.", "x_"],
)
def test_a_dataset_id_of_1_to_128_url_safe_characters_is_accepted(dataset_id: str) -> None:
    assert Dataset.model_validate(_dataset(id=dataset_id)).id == dataset_id


@pytest.mark.parametrize(
    "dataset_id",
    [
        "",
        "a" * 129,
        "owner/name",
        "-leading-dash",
        ".hidden",
        "_under",
        "has space",
        "tab\there",
        "trailing-newline\n",
        "ünïcode",
        "semi;colon",
        "percent%2F",
    ],
)
def test_a_dataset_id_outside_the_pattern_is_rejected(dataset_id: str) -> None:
    with pytest.raises(ValidationError) as err:
        Dataset.model_validate(_dataset(id=dataset_id))
    assert _error_paths(err.value) == ["id"]


@pytest.mark.parametrize(
    "version", ["1.0.0", "0.0.1", "1.1.0-rc.1", "2.0.0-alpha.1+build.5", "10.20.30"]
)
def test_a_semver_version_is_accepted(version: str) -> None:
    assert Dataset.model_validate(_dataset(version=version)).version == version


@pytest.mark.parametrize(
    "version",
    ["1", "1.0", "v1.0.0", "01.0.0", "1.0.0-01", "1.0.0.0", "latest", "", " 1.0.0", "1.0.0\n"],
)
def test_a_version_that_is_not_semver_is_rejected(version: str) -> None:
    with pytest.raises(ValidationError) as err:
        Dataset.model_validate(_dataset(version=version))
    assert _error_paths(err.value) == ["version"]


def test_a_version_longer_than_the_stored_column_is_rejected() -> None:
    # A valid SemVer string may be arbitrarily long; the registry keys versions by 128 chars.
    long_version = "1.0.0-" + "a" * 200
    with pytest.raises(ValidationError) as err:
        Dataset.model_validate(_dataset(version=long_version))
    assert _error_paths(err.value) == ["version"]


@pytest.mark.parametrize(
    ("env", "model"),
    [
        ({"kind": "prompt", "context": "ctx"}, PromptEnv),
        ({"kind": "repo", "source": {"path": "/testbed"}}, RepoEnv),
        ({"kind": "browser", "start_url": "https://example.org/"}, BrowserEnv),
        ({"kind": "os-use"}, OsUseEnv),
    ],
)
def test_the_env_kind_picks_one_of_the_four_env_models(env: dict[str, Any], model: type) -> None:
    case = Case.model_validate(_case(env=env))
    assert isinstance(case.env, model)
    assert case.env.kind == env["kind"]


def test_an_os_use_env_defaults_its_display_to_colon_99() -> None:
    case = Case.model_validate(_case(env={"kind": "os-use"}))
    assert isinstance(case.env, OsUseEnv)
    assert case.env.display == ":99"


@pytest.mark.parametrize("env", [{"kind": "desktop"}, {}, {"context": "no kind"}])
def test_an_env_without_a_known_kind_is_rejected(env: dict[str, Any]) -> None:
    with pytest.raises(ValidationError) as err:
        Case.model_validate(_case(env=env))
    assert all(p.startswith("env") for p in _error_paths(err.value))


def test_a_field_of_another_env_kind_is_rejected() -> None:
    with pytest.raises(ValidationError) as err:
        Case.model_validate(_case(env={"kind": "prompt", "start_url": "https://example.org"}))
    assert "env.prompt.start_url" in _error_paths(err.value)


@pytest.mark.parametrize(
    ("source", "model"),
    [
        ({"git": "https://github.com/psf/requests", "ref": "v2.31.0"}, GitSource),
        ({"git": "http://git.local/repo.git", "ref": "abc123"}, GitSource),
        ({"files": {"main.py": "print(1)\n"}}, FilesSource),
        ({"path": "/testbed"}, PathSource),
    ],
)
def test_a_repo_source_is_git_files_or_path(source: dict[str, Any], model: type) -> None:
    case = Case.model_validate(_case(env={"kind": "repo", "source": source}))
    assert isinstance(case.env, RepoEnv)
    assert isinstance(case.env.source, model)


@pytest.mark.parametrize(
    "source",
    [
        {"git": "https://github.com/psf/requests"},  # no ref
        {"git": "https://github.com/psf/requests", "ref": ""},
        {"git": "git@github.com:psf/requests.git", "ref": "main"},
        {"git": "file:///srv/repo.git", "ref": "main"},
        {"git": "ssh://github.com/psf/requests", "ref": "main"},
        {"path": ""},
        {},
        {"git": "https://github.com/psf/requests", "ref": "main", "path": "/testbed"},
    ],
)
def test_a_repo_source_that_is_not_http_git_with_ref_files_or_path_is_rejected(
    source: dict[str, Any],
) -> None:
    with pytest.raises(ValidationError):
        Case.model_validate(_case(env={"kind": "repo", "source": source}))


def test_a_repo_env_needs_a_source() -> None:
    with pytest.raises(ValidationError) as err:
        Case.model_validate(_case(env={"kind": "repo"}))
    assert "env.repo.source" in _error_paths(err.value)


def test_allowed_hosts_are_accepted_with_the_allowlist_mode() -> None:
    case = Case.model_validate(
        _case(network={"mode": "allowlist", "allowed_hosts": ["pypi.org", "github.com"]})
    )
    assert case.network is not None
    assert case.network.allowed_hosts == ["pypi.org", "github.com"]


@pytest.mark.parametrize("mode", ["public", "none"])
def test_allowed_hosts_without_the_allowlist_mode_are_rejected(mode: str) -> None:
    with pytest.raises(ValidationError) as err:
        Case.model_validate(_case(network={"mode": mode, "allowed_hosts": ["pypi.org"]}))
    assert "allowed_hosts is only allowed with mode 'allowlist'" in str(err.value)


def test_duplicate_case_ids_are_rejected_listing_each_duplicate() -> None:
    cases = [_case("a"), _case("b"), _case("a"), _case("c"), _case("b"), _case("a")]
    with pytest.raises(ValidationError) as err:
        Dataset.model_validate(_dataset(cases=cases))
    (error,) = err.value.errors()
    assert error["msg"].endswith("duplicates: a, b")


def test_a_dataset_may_have_no_cases() -> None:
    assert Dataset.model_validate(_dataset(cases=[])).cases == []


@pytest.mark.parametrize(
    ("where", "payload"),
    [
        ("dataset", _dataset(owner="me")),
        ("case", _dataset(cases=[_case(answer="4")])),
        ("env", _dataset(cases=[_case(env={"kind": "prompt", "ctx": "typo"})])),
        ("network", _dataset(cases=[_case(network={"mode": "none", "hosts": []})])),
        (
            "produced_by",
            _dataset(produced_by={"via": "spec", "id": "x", "made_by": "me"}),
        ),
    ],
)
def test_unknown_fields_are_rejected_at_every_level(where: str, payload: dict[str, Any]) -> None:
    with pytest.raises(ValidationError) as err:
        Dataset.model_validate(payload)
    assert any(e["type"] == "extra_forbidden" for e in err.value.errors()), where


@pytest.mark.parametrize("timeout_s", [0, -1])
def test_a_timeout_that_is_not_positive_is_rejected(timeout_s: int) -> None:
    with pytest.raises(ValidationError) as err:
        Case.model_validate(_case(timeout_s=timeout_s))
    assert _error_paths(err.value) == ["timeout_s"]


def test_the_timeout_defaults_to_1800_seconds() -> None:
    assert Case.model_validate(_case()).timeout_s == 1800


def test_content_tags_are_trimmed_and_deduplicated_in_first_seen_order() -> None:
    dataset = Dataset.model_validate(_dataset(tags=[" math ", "qa", "math", "qa "]))
    assert dataset.tags == ["math", "qa"]


def test_an_empty_content_tag_is_rejected() -> None:
    with pytest.raises(ValidationError):
        Dataset.model_validate(_dataset(tags=["ok", "  "]))


@pytest.mark.parametrize("case_id", ["with space", "owner/name#3", "ünïcode", "x" * 512])
def test_a_case_id_may_hold_spaces_slashes_and_unicode(case_id: str) -> None:
    assert Case.model_validate(_case(case_id)).id == case_id


@pytest.mark.parametrize("case_id", ["", "x" * 513, "nul\x00byte", "tab\there", "line\nbreak"])
def test_a_case_id_that_is_empty_too_long_or_has_control_characters_is_rejected(
    case_id: str,
) -> None:
    with pytest.raises(ValidationError) as err:
        Case.model_validate(_case(case_id))
    assert _error_paths(err.value) == ["id"]


def test_a_description_with_a_nul_character_is_rejected() -> None:
    with pytest.raises(ValidationError) as err:
        Dataset.model_validate(_dataset(description="a\x00b"))
    assert _error_paths(err.value) == ["description"]


def test_a_description_may_span_lines() -> None:
    assert Dataset.model_validate(_dataset(description="a\n\tb")).description == "a\n\tb"


@pytest.mark.parametrize("value", [float("nan"), float("inf"), [1.0, float("-inf")]])
def test_a_metadata_number_that_json_cannot_hold_is_rejected(value: object) -> None:
    # orjson writes NaN and infinities as null, so accepting them would change the content.
    with pytest.raises(ValidationError) as err:
        Case.model_validate(_case(metadata={"score": value}))
    assert all(p.startswith("metadata.score") for p in _error_paths(err.value))


def test_the_control_character_check_refuses_exactly_unicode_category_cc() -> None:
    refused = {cp for cp in range(sys.maxunicode + 1) if CONTROL_CHAR_RE.search(chr(cp))}
    cc = {cp for cp in range(sys.maxunicode + 1) if unicodedata.category(chr(cp)) == "Cc"}
    assert refused == cc
