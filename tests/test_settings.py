"""Settings from the environment: prefix, conventional names, case, precedence, errors.

Pins what ``benchbook.settings`` (pydantic-settings) reads, so a change of how settings are
loaded cannot change it silently.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from benchbook.settings import Settings

NAMES = ("BENCHBOOK_", "DATABASE_URL", "HF_TOKEN", "HF_ENDPOINT")


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for name in list(os.environ):
        if name.upper().startswith(NAMES):
            monkeypatch.delenv(name)


def test_defaults_without_environment() -> None:
    settings = Settings()
    assert settings.home == Path("benchbook-data")
    assert settings.port == 8000
    assert settings.database_url is None
    assert settings.run_worker is True


def test_prefixed_names_in_any_case_are_read_and_validated(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("BENCHBOOK_PORT", "9001")
    monkeypatch.setenv("benchbook_home", "/tmp/bb-home")
    monkeypatch.setenv("BENCHBOOK_RUN_WORKER", "false")
    monkeypatch.setenv("BENCHBOOK_WORK_ROOT", "")  # empty counts as given
    monkeypatch.setenv("BENCHBOOK_NOT_A_SETTING", "x")  # ignored
    settings = Settings()
    assert (settings.port, settings.home, settings.run_worker) == (
        9001,
        Path("/tmp/bb-home"),
        False,
    )
    assert settings.work_root == Path("")


def test_conventional_names_win_over_prefixed_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCHBOOK_DATABASE_URL", "sqlite:///prefixed.db")
    assert Settings().database_url == "sqlite:///prefixed.db"
    monkeypatch.setenv("DATABASE_URL", "sqlite:///conventional.db")
    monkeypatch.setenv("hf_token", "tok")
    settings = Settings()
    assert settings.database_url == "sqlite:///conventional.db"
    assert settings.hf_token == "tok"
    # The prefix does not apply to a field with conventional names: only its aliases count.
    monkeypatch.delenv("hf_token")
    monkeypatch.setenv("BENCHBOOK_HF_TOKEN", "prefixed")
    assert Settings().hf_token == "prefixed"


def test_keyword_arguments_win_by_name_or_alias(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCHBOOK_PORT", "9001")
    monkeypatch.setenv("DATABASE_URL", "sqlite:///env.db")
    monkeypatch.setenv("HF_ENDPOINT", "https://env.example")
    assert Settings(port=1).port == 1
    assert Settings(database_url="sqlite:///kw.db").database_url == "sqlite:///kw.db"
    assert Settings(DATABASE_URL="sqlite:///alias.db").database_url == "sqlite:///alias.db"
    assert Settings(HF_ENDPOINT="https://kw.example").hf_endpoint == "https://kw.example"


def test_a_bad_value_from_the_environment_is_a_validation_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("BENCHBOOK_PORT", "eighty")
    with pytest.raises(ValidationError, match="port"):
        Settings()
    monkeypatch.setenv("BENCHBOOK_PORT", "80")
    monkeypatch.setenv("BENCHBOOK_RUN_LEASE_S", "5")
    monkeypatch.setenv("BENCHBOOK_RUN_LEASE_RENEW_S", "6")
    with pytest.raises(ValidationError, match="must be shorter than"):
        Settings()
