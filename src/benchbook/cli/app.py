"""The typer application and the helpers every command module shares.

Command modules register themselves on :data:`app` (or on sub-apps) when imported at the end
of this module. Human output by default; ``--json`` prints machine-readable JSON.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

import orjson
import typer
from pydantic import BaseModel
from rich.console import Console

from benchbook.errors import BenchbookError
from benchbook.services.context import Context, local_admin_context, open_engine
from benchbook.settings import get_settings

app = typer.Typer(
    name="benchbook",
    help="Versioned evaluation datasets and the evaluations run on them.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
console = Console()
err_console = Console(stderr=True)

F = TypeVar("F", bound=Callable[..., Any])


def local_context() -> Context:
    """The local admin context on the configured database (migrated on open)."""
    settings = get_settings()
    return local_admin_context(open_engine(settings), settings)


def emit_json(value: Any) -> None:
    """Print a pydantic model, list of models or plain value as indented JSON."""

    def plain(v: Any) -> Any:
        if isinstance(v, BaseModel):
            return v.model_dump(mode="json")
        if isinstance(v, list):
            return [plain(x) for x in v]
        return v

    sys.stdout.write(orjson.dumps(plain(value), option=orjson.OPT_INDENT_2).decode() + "\n")


def handle_errors(fn: F) -> F:
    """Turn BenchbookError into a one-line message on stderr and exit code 1."""

    @wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except BenchbookError as exc:
            err_console.print(f"[bold red]error[/] [red]{exc.code}[/]: {exc.message}")
            for issue in exc.details.get("errors", [])[:20]:
                where = issue.get("path") or issue.get("row") or ""
                err_console.print(f"  - {where}: {issue.get('message', issue)}")
            raise typer.Exit(1) from exc

    return wrapper  # type: ignore[return-value]


JSON_OPTION = typer.Option(False, "--json", help="Print JSON instead of tables.")
