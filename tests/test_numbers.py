"""Numbers read as numbers (issue 30 §3): integers with separators, costs with enough digits,
never an exponent."""

from __future__ import annotations

import pytest

from benchbook import numbers


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (14890, "14,890"),
        (14890.0, "14,890"),
        (1.489e4, "14,890"),
        (None, "—"),
        (0, "0"),
        (-1200, "-1,200"),
    ],
)
def test_token_counts_are_integers_with_separators(value: float | None, text: str) -> None:
    assert numbers.tokens(value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (9e-07, "$0.0000009"),
        (0.0042, "$0.0042"),
        (0.00421234, "$0.00421"),
        (0.5, "$0.50"),
        (0.123, "$0.123"),
        (12.5, "$12.50"),
        (1234.5, "$1,234.50"),
        (0.0, "$0"),
        (None, "—"),
    ],
)
def test_costs_keep_their_significant_digits(value: float | None, text: str) -> None:
    assert numbers.usd(value) == text


def test_signed_values_carry_plus_or_minus_and_never_an_exponent() -> None:
    assert numbers.usd(9e-07, signed=True) == "+$0.0000009"
    assert numbers.usd(-0.02, signed=True) == "-$0.02"
    assert numbers.number(1.5e-5, signed=True) == "+0.000015"
    assert numbers.number(123456.7) == "123,457"
    assert numbers.number(12.3456) == "12.35"
    assert numbers.tokens(1200, signed=True) == "+1,200"
    assert numbers.percent(0.8333) == "83.3%"
    for value in (1e-9, 3.2e-7, 1.489e4, 7.7e12):
        assert "e" not in numbers.number(value) and "e" not in numbers.usd(value)
