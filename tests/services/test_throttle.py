"""The login throttle's counting with device cookies (issue 27), on its own clock: a trusted
device is counted on its own key, and its success gives back nothing it did not take."""

from __future__ import annotations

import pytest

from benchbook.errors import TooManyRequests
from benchbook.services.throttle import LoginThrottle


def _throttle() -> LoginThrottle:
    return LoginThrottle(per_account=2, per_address=3, per_device=2, clock=lambda: 100.0)


def test_a_trusted_devices_success_does_not_give_back_an_attempt_of_its_address() -> None:
    throttle = _throttle()
    for i in range(3):
        assert throttle.begin(f"nobody{i}@example.org", "10.0.0.1") is False
    assert throttle.begin("mia@example.org", "10.0.0.1", device="nonce") is True
    throttle.succeeded("mia@example.org", "10.0.0.1", device="nonce")
    with pytest.raises(TooManyRequests, match="client address"):
        throttle.begin("nobody9@example.org", "10.0.0.1")  # still 3 failures of the address


def test_a_locked_account_still_lets_its_trusted_device_in_until_the_device_bound() -> None:
    throttle = _throttle()
    for i in range(2):
        throttle.begin("mia@example.org", f"203.0.113.{i}")
    with pytest.raises(TooManyRequests, match="account"):
        throttle.begin("mia@example.org", "203.0.113.9")
    assert throttle.begin("mia@example.org", "10.0.0.1", device="nonce") is True
    assert throttle.begin("mia@example.org", "10.0.0.1", device="nonce") is True
    with pytest.raises(TooManyRequests, match="account"):  # past its own bound: unknown again
        throttle.begin("mia@example.org", "10.0.0.1", device="nonce")
