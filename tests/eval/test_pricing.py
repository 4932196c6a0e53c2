"""The dated pricing table (SPEC H.6): shipped data, its sha256, and pricing token usage."""

from __future__ import annotations

import hashlib
import json
from datetime import date
from fractions import Fraction
from importlib import resources
from pathlib import Path

import pytest

from benchbook.contracts.run import Usage
from benchbook.errors import InvalidInput
from benchbook.eval.pricing import load_pricing, price_usd

TABLE = {
    "as_of": "2025-05-31",
    "source": "test",
    "models": {"m": {"input_per_mtok_usd": 2.5, "output_per_mtok_usd": 10.0}},
}


def _write(tmp_path: Path, table: object) -> Path:
    path = tmp_path / "prices.json"
    path.write_text(json.dumps(table))
    return path


def test_the_shipped_table_loads_with_the_sha256_of_its_bytes() -> None:
    table, sha = load_pricing()
    data = resources.files("benchbook.eval").joinpath("pricing_table.json").read_bytes()
    assert sha == hashlib.sha256(data).hexdigest()
    assert isinstance(table.as_of, date) and table.source
    assert {"gpt-4o", "gpt-4o-mini", "gpt-4.1", "o3-mini"} <= set(table.models)


def test_a_given_file_replaces_the_shipped_table(tmp_path: Path) -> None:
    path = _write(tmp_path, TABLE)
    table, sha = load_pricing(path)
    assert sha == hashlib.sha256(path.read_bytes()).hexdigest()
    assert set(table.models) == {"m"}


def test_the_price_is_tokens_times_price_per_million(tmp_path: Path) -> None:
    table, _ = load_pricing(_write(tmp_path, TABLE))
    usage = Usage(input_tokens=1234, output_tokens=567)
    # 1234 × 2.5 + 567 × 10 = 3085 + 5670 = 8755 micro-dollars.
    exact = (1234 * Fraction(5, 2) + 567 * 10) / 10**6
    assert exact == Fraction(8755, 10**6)
    assert price_usd(table, "m", usage) == float(exact)
    assert price_usd(table, "m", Usage(input_tokens=1000)) == 0.0025


def test_an_unknown_model_is_unpriced_not_free(tmp_path: Path) -> None:
    table, _ = load_pricing(_write(tmp_path, TABLE))
    assert price_usd(table, "other", Usage(input_tokens=10)) is None
    assert price_usd(table, None, Usage(input_tokens=10)) is None


@pytest.mark.parametrize(
    ("patch", "field"),
    [
        (
            {"models": {"m": {"input_per_mtok_usd": -1, "output_per_mtok_usd": 1}}},
            "models.m.input_per_mtok_usd",
        ),
        ({"models": {"m": {"input_per_mtok_usd": 1}}}, "models.m.output_per_mtok_usd"),
        ({"as_of": "last week"}, "as_of"),
    ],
)
def test_a_bad_table_error_names_the_file_and_the_field(
    tmp_path: Path, patch: dict, field: str
) -> None:
    path = _write(tmp_path, {**TABLE, **patch})
    with pytest.raises(InvalidInput) as info:
        load_pricing(path)
    assert str(path) in info.value.message and field in info.value.message


def test_a_table_that_is_not_json_or_missing_is_invalid_input(tmp_path: Path) -> None:
    bad = tmp_path / "prices.json"
    bad.write_text("{not json")
    with pytest.raises(InvalidInput, match="not JSON"):
        load_pricing(bad)
    with pytest.raises(InvalidInput, match="cannot be read"):
        load_pricing(tmp_path / "absent.json")
