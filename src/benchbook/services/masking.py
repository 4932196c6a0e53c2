"""Secrets are never stored in clear (issue 27 item 4): the write boundary's one masking step.

Every secret value a case could see — the harness's and judges' secrets resolved for the run,
the installation's ``HF_TOKEN`` — is replaced by ``***`` in everything a result stores: the
answer, the error, each score's detail and the trace (as CI systems mask their secrets). A
harness that prints its key, or an upstream 401 that echoes it, is stored masked. Values shorter
than :data:`MIN_MASKED_CHARS` are not masked (masking ``a`` would garble every answer; such a
value is no credential).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, TypeVar

from pydantic import BaseModel

MASK = "***"
MIN_MASKED_CHARS = 4

M = TypeVar("M", bound=BaseModel)


def masked_values(values: Iterable[str | None]) -> list[str]:
    """The values worth masking, longest first (so a value containing another is masked whole)."""
    kept = {v for v in values if v and len(v) >= MIN_MASKED_CHARS}
    return sorted(kept, key=len, reverse=True)


def mask_text(text: str, values: list[str]) -> str:
    """``text`` with every occurrence of each value replaced by ``***``."""
    for value in values:
        if value in text:
            text = text.replace(value, MASK)
    return text


def mask_json_text(text: str, values: list[str]) -> str:
    """JSON text with every value masked, raw and as it reads JSON-escaped."""
    for value in values:
        escaped = json.dumps(value)[1:-1]
        for form in {value, escaped}:
            if form in text:
                text = text.replace(form, MASK)
    return text


def _mask(node: Any, values: list[str]) -> Any:
    if isinstance(node, str):
        return mask_text(node, values)
    if isinstance(node, dict):
        return {mask_text(k, values): _mask(v, values) for k, v in node.items()}
    if isinstance(node, list):
        return [_mask(v, values) for v in node]
    return node


def mask_model(model: M, values: list[str]) -> M:
    """A copy of ``model`` with every string (keys included) masked; ``model`` itself when
    ``values`` is empty or none occurs in it."""
    if not values:
        return model
    dumped = model.model_dump(mode="json")
    masked = _mask(dumped, values)
    if masked == dumped:
        return model
    return type(model).model_validate(masked)
