"""Model prices (SPEC H.6): a dated table shipped as data, and pricing a trace's token usage.

The table is JSON ``{as_of: "YYYY-MM-DD", source?: text, models: {model: {input_per_mtok_usd,
output_per_mtok_usd}}}`` (:class:`~benchbook.contracts.scorecard.PricingTable`). The shipped one,
``benchbook/eval/pricing_table.json``, holds vendors' public list prices as published on its
``as_of`` date; ``Settings.pricing_file`` replaces it. The SHA-256 of the file's bytes is
recorded with every run and scorecard that used it (SPEC H.9).
"""

from __future__ import annotations

from decimal import Decimal
from importlib import resources
from pathlib import Path

import orjson
from pydantic import ValidationError

from benchbook.contracts.run import Usage
from benchbook.contracts.scorecard import PricingTable
from benchbook.datasets.identity import sha256_hex
from benchbook.errors import InvalidInput

SHIPPED_TABLE = "pricing_table.json"
TOKENS_PER_MTOK = Decimal(1_000_000)


def _read(path: Path | None) -> tuple[bytes, str]:
    """The table's bytes and a name for error messages."""
    if path is None:
        ref = resources.files("benchbook.eval").joinpath(SHIPPED_TABLE)
        return ref.read_bytes(), f"benchbook/eval/{SHIPPED_TABLE}"
    try:
        return path.read_bytes(), str(path)
    except OSError as exc:
        raise InvalidInput(
            f"pricing table {path}: cannot be read ({exc.strerror or exc})", {"file": str(path)}
        ) from exc


def load_pricing(path: Path | None = None) -> tuple[PricingTable, str]:
    """Load a pricing table: ``path``, or the shipped table when None.

    Returns:
        ``(table, sha256)`` — the parsed table and the SHA-256 hex of the file's exact bytes.

    Raises:
        InvalidInput: the file cannot be read, is not JSON, or does not match the table shape;
            the message names the file and the first bad field
            (``models.gpt-4o.input_per_mtok_usd``) and ``details.errors`` lists
            ``{path, message}`` for every bad field.
    """
    data, name = _read(path)
    try:
        raw = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise InvalidInput(f"pricing table {name}: not JSON: {exc}", {"file": name}) from exc
    try:
        table = PricingTable.model_validate(raw)
    except ValidationError as exc:
        errors = [
            {"path": ".".join(str(p) for p in e["loc"]) or "(root)", "message": e["msg"]}
            for e in exc.errors()
        ]
        first = errors[0]
        raise InvalidInput(
            f"pricing table {name}: field {first['path']}: {first['message']}",
            {"file": name, "errors": errors},
        ) from exc
    return table, sha256_hex(data)


def price_usd(table: PricingTable, model: str | None, usage: Usage) -> float | None:
    """The cost in USD of ``usage`` on ``model``.

    Formula: ``(input_tokens × input_per_mtok_usd + output_tokens × output_per_mtok_usd) / 1e6``,
    computed in decimal arithmetic on the prices as written (so 1,000 tokens at $2.50 per million
    cost exactly $0.0025) and rounded once to the nearest float.

    Returns:
        The cost, or None when ``model`` is None or not in the table (unpriced, not free).
    """
    if model is None or model not in table.models:
        return None
    price = table.models[model]
    total = Decimal(usage.input_tokens) * Decimal(repr(price.input_per_mtok_usd)) + Decimal(
        usage.output_tokens
    ) * Decimal(repr(price.output_per_mtok_usd))
    return float(total / TOKENS_PER_MTOK)


__all__ = ["load_pricing", "price_usd"]
