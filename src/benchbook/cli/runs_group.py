"""The ``benchbook runs`` group and what its commands share (issue 32).

:data:`runs_app` is the group the ``runs …`` commands register on: :mod:`benchbook.cli.runs`
(list, show, cases, trace, resume, retry, cancel, rescore, scorecard, tag),
:mod:`benchbook.cli.run_exports` (export) and :mod:`benchbook.cli.run_imports`
(import-inspect, import-lm-eval). :mod:`benchbook.cli.runs` adds it to the root app and imports
the other two, in that order — the order ``runs --help`` lists them. :func:`parse_grader` reads the
``--grader`` option of ``run`` and of the imports.
"""

from __future__ import annotations

from typing import Any

import orjson
import typer

from benchbook.contracts.dataset import RunGrader
from benchbook.errors import InvalidInput
from benchbook.services.validation import parse_model

runs_app = typer.Typer(
    help="Evaluation runs: list, show, cases, trace, export, resume, retry, cancel, rescore,"
    " scorecard, tag, import-inspect, import-lm-eval."
)

GRADER_HELP = (
    "A grader replacing the cases' own: ID or ID=JSON-config (repeatable), e.g. numeric, "
    '\'regex={"pattern": "^yes"}\'.'
)


def parse_grader(text: str) -> RunGrader:
    """``ID`` or ``ID={json config}`` → RunGrader. Raises InvalidInput naming the option."""
    gid, sep, raw = text.partition("=")
    config: Any = {}
    if sep:
        try:
            config = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise InvalidInput(f"--grader {gid}: the config is not JSON: {exc}") from exc
    return parse_model(RunGrader, {"id": gid.strip(), "config": config}, f"--grader {gid}")
