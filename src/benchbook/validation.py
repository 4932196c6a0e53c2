"""Turning pydantic validation errors into InvalidInput with ``{path, message}`` items (used by
the services and by the Python client, which must not import the services)."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from benchbook.contracts.common import CONTRADICTION
from benchbook.errors import Conflict, InvalidInput

M = TypeVar("M", bound=BaseModel)


def issues_of(exc: ValidationError, prefix: str = "") -> list[dict[str, str]]:
    """``[{path, message}]`` from a pydantic error; paths are dotted (``cases.3.env.kind``)."""
    out = []
    for err in exc.errors(include_url=False):
        path = ".".join(str(p) for p in err["loc"])
        if prefix:
            path = f"{prefix}.{path}" if path else prefix
        msg = str(err["msg"]).removeprefix("Value error, ")
        out.append({"path": path or "(root)", "message": msg})
    return out


def parse_model(model: type[M], data: Any, what: str, prefix: str = "") -> M:
    """Validate ``data`` as ``model``.

    Raises:
        InvalidInput: listing every problem by path.
        Conflict: the same, when every problem is a
            :data:`~benchbook.contracts.common.CONTRADICTION` (duplicate case ids, gold fields
            naming absent metadata keys): rules across fields no JSON Schema can state.
    """
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        issues = issues_of(exc, prefix)
        first = issues[0]
        more = f" (and {len(issues) - 1} more)" if len(issues) > 1 else ""
        contradictions = all(e["type"] == CONTRADICTION for e in exc.errors(include_url=False))
        error = Conflict if contradictions else InvalidInput
        raise error(
            f"invalid {what}: {first['path']}: {first['message']}{more}", {"errors": issues}
        ) from exc
