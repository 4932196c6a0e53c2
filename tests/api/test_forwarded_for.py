"""Issue 27: ``X-Forwarded-For`` was believed from any loopback peer without a setting (uvicorn's
default), so one local client could pose as many addresses and dodge the per-address login
throttle. Now ``benchbook serve`` believes it only from ``BENCHBOOK_TRUSTED_PROXIES``: a real
server on loopback, throttling failed logins per address (3 allowed here)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.live_server import fresh_database, serve

ENV = {"BENCHBOOK_LOGIN_FAILURES_PER_ADDRESS": "3", "BENCHBOOK_LOGIN_FAILURES_PER_ACCOUNT": "100"}


def _home(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


def _logins(url: str, forwarded: list[str]) -> list[int]:
    statuses = []
    for i, address in enumerate(forwarded):
        body = {"email": f"nobody{i}@example.org", "password": "wrong-password"}
        answer = httpx.post(
            f"{url}/api/login", json=body, headers={"X-Forwarded-For": address}, timeout=60
        )
        statuses.append(answer.status_code)
    return statuses


def test_a_loopback_client_cannot_pose_as_other_addresses_without_the_setting(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    with (
        fresh_database("sqlite", tmp_path_factory) as url,
        serve(("sqlite", url), _home(tmp_path), ENV) as server,
    ):
        posed = [f"203.0.113.{i}" for i in range(4)]
        assert _logins(server.url, posed) == [401, 401, 401, 429]


def test_a_named_proxy_is_believed_and_each_forwarded_address_counted_alone(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    env = {**ENV, "BENCHBOOK_TRUSTED_PROXIES": "10.9.9.9, 127.0.0.0/8"}
    with (
        fresh_database("sqlite", tmp_path_factory) as url,
        serve(("sqlite", url), _home(tmp_path), env) as server,
    ):
        assert _logins(server.url, [f"203.0.113.{i}" for i in range(4)]) == [401] * 4
        assert _logins(server.url, ["198.51.100.7"] * 4) == [401, 401, 401, 429]
