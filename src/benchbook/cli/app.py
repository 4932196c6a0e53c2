"""The typer application and the helpers every command module shares.

Command modules register themselves on :data:`app` (or on sub-apps) when imported at the end
of this module. Human output by default; ``--json`` prints machine-readable JSON.

Stored data (ids, tasks, descriptions, tags, messages) is never read as Rich markup: it goes
through :func:`cell` (a plain ``Text``) or :func:`rich.markup.escape`, and emoji codes stay text.
Errors: one line ``error CODE: MESSAGE`` on stderr and exit code 1; with ``--json`` the envelope
``{code, message, details}`` on stdout instead (exit code 1), so a script reads one stream.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar

import orjson
import typer
from pydantic import BaseModel
from rich.console import Console
from rich.markup import escape
from rich.text import Text

from benchbook.errors import BenchbookError, InvalidInput
from benchbook.services.context import Context, local_admin_context, open_engine
from benchbook.settings import get_settings

app = typer.Typer(
    name="benchbook",
    help="Versioned evaluation datasets and the evaluations run on them.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
console = Console(emoji=False)
err_console = Console(stderr=True, emoji=False, soft_wrap=True)

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


def cell(value: object) -> Text:
    """``value`` as plain text for a table cell or a line: brackets and ``:codes:`` verbatim."""
    return Text(str(value))


def count(n: int, noun: str) -> str:
    """``n`` with thousands separators and ``noun`` pluralized: ``1 case``, ``1,319 cases``."""
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


def print_outcome(state: str, dataset_id: str, version: str, cases: int) -> None:
    """The one outcome line of every command that writes a dataset version.

    ``state`` is ``registered``, ``unchanged`` or ``revived``: ``registered gsm8k@1.0.0
    (1,319 cases)``.
    """
    console.print(
        f"{state} [bold]{escape(dataset_id)}@{escape(version)}[/] ({count(cases, 'case')})"
    )


def print_error(exc: BenchbookError, as_json: bool) -> None:
    """Report ``exc``: the envelope as JSON on stdout, or ``error CODE: MESSAGE`` on stderr
    followed by up to 20 ``details.errors`` lines (``  - path: message``)."""
    if as_json:
        sys.stdout.write(orjson.dumps(exc.to_dict(), default=str).decode() + "\n")
        return
    err_console.print(f"[bold red]error[/] [red]{escape(exc.code)}[/]: {escape(exc.message)}")
    for issue in exc.details.get("errors", [])[:20]:
        where = issue.get("path") or issue.get("row") or ""
        err_console.print(f"  - {where}: {issue.get('message', issue)}", markup=False)


def handle_errors(fn: F) -> F:
    """Turn BenchbookError into :func:`print_error` output and exit code 1.

    A command's ``json`` keyword argument (the ``--json`` flag) selects the JSON envelope.
    """

    @wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except BenchbookError as exc:
            print_error(exc, bool(kwargs.get("json")))
            raise typer.Exit(1) from exc

    return wrapper  # type: ignore[return-value]


JSON_OPTION = typer.Option(False, "--json", help="Print JSON instead of tables.")


def read_json_file(path: Path) -> Any:
    """Parse a JSON file. Raises InvalidInput naming the file (unreadable or not JSON)."""
    try:
        return orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise InvalidInput(f"{path}: not valid JSON: {exc}") from exc
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}") from exc
