"""Numbers as people read them, for the dashboard, the CLI and the text reports alike: token counts
as integers with separators (``14,890``, never ``1.489e+04``), costs with enough significant
digits (``$0.0000009``, never ``$0.0000`` or ``9e-07``), percentages, and plain quantities
without exponents. Every function takes None and returns ``—`` for it (the dashboard's "no
value" mark); ``signed`` puts ``+`` before a positive value and ``-`` before a
negative one.
"""

from __future__ import annotations

import math

NONE = "—"
MINUS = "-"


def _sign(value: float, signed: bool) -> str:
    if value < 0:
        return MINUS
    return "+" if signed and value > 0 else ""


def plain(value: float, digits: int = 4) -> str:
    """``value`` in positional notation, no exponent: ``digits`` significant digits below 1000
    (trailing zeros dropped), integers with separators above: ``0.00012``, ``12.35``,
    ``14,890``."""
    if value == 0 or not math.isfinite(value):
        return "0" if value == 0 else str(value)
    size = abs(value)
    if size >= 10 ** (digits - 1) or float(size).is_integer():
        return f"{round(size):,}"
    decimals = max(0, digits - 1 - math.floor(math.log10(size)))
    text = f"{size:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def number(value: float | None, signed: bool = False, digits: int = 4) -> str:
    """A quantity (latency in ms, a metric, a delta) via :func:`plain`, signed on request."""
    if value is None:
        return NONE
    return _sign(value, signed) + plain(value, digits)


def tokens(value: float | None, signed: bool = False) -> str:
    """A token count: an integer with separators (``14,890``; ``+1,200``)."""
    if value is None:
        return NONE
    return _sign(value, signed) + f"{round(abs(value)):,}"


def usd(value: float | None, signed: bool = False) -> str:
    """A cost in US dollars: cents from one dollar up (``$1,234.50``), three significant digits
    below (``$0.0042``, ``$0.0000009``); zero is ``$0``."""
    if value is None:
        return NONE
    size = abs(value)
    if size == 0:
        return "$0"
    if size >= 1:
        text = f"{size:,.2f}"
    else:
        decimals = max(2, 2 - math.floor(math.log10(size)))
        text = f"{size:.{decimals}f}".rstrip("0")
        text = text + "0" * max(0, 2 - len(text.split(".")[1]))
    return f"{_sign(value, signed)}${text}"


def percent(value: float | None, digits: int = 1, signed: bool = False) -> str:
    """A share as a percentage: ``0.8333`` → ``83.3%``."""
    if value is None:
        return NONE
    return f"{_sign(value, signed)}{abs(value) * 100:.{digits}f}%"
