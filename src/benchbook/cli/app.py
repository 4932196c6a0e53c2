"""The typer application and the helpers every command module shares.

Command modules register themselves on :data:`app` (or on sub-apps) when imported. They are
imported lazily: :data:`COMMANDS` names every top-level command, the module that registers it
and its help line, so ``benchbook --help`` and ``benchbook --version`` import neither a command
module nor SQLAlchemy, rich or pydantic, and ``benchbook NAME …`` imports only NAME's module
(``tests/cli/test_cli_startup.py`` checks the table against the modules). Human output by
default; ``--json`` prints machine-readable JSON.

Stored data (ids, tasks, descriptions, tags, messages) is never read as Rich markup: it goes
through :func:`cell` (a plain ``Text``) or :func:`rich.markup.escape`, and emoji codes stay text.
Errors: one line ``error CODE: MESSAGE`` on stderr and exit code 1; with ``--json`` the envelope
``{code, message, details}`` on stdout instead (exit code 1), so a script reads one stream.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from difflib import get_close_matches
from functools import cache, wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar, cast

import orjson
import typer
from typer import _click
from typer.core import TyperGroup

from benchbook import __version__
from benchbook.errors import BenchbookError, InvalidInput

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Column, Table
    from rich.text import Text

    from benchbook.services.context import Context


class LazyCommand(NamedTuple):
    """A top-level command: the module that registers it and the first paragraph of its help."""

    module: str
    help: str


#: Every top-level command in ``--help`` order (commands, then groups). ``module`` registers it
#: on :data:`app` when imported; ``help`` must equal the first paragraph of its real help.
COMMANDS: dict[str, LazyCommand] = {
    name: LazyCommand(f"benchbook.cli.{module}", help)
    for name, module, help in (
        ("compare", "compare", "Compare a candidate scorecard with a baseline, pair by pair;"
         " optionally gate CI on it."),
        ("register", "datasets", "Register a dataset version from a JSON file (identical"
         " content again is a no-op)."),
        ("validate", "datasets", "Dry-run a register: report schema errors by path and whether"
         " it would conflict."),
        ("import", "imports", "Import a benchmark (catalog id, --recipe ID[@VERSION] or --spec)"
         " from --file into a dataset version."),
        ("leaderboard", "leaderboards", "Rank the harnesses run on a dataset version: pass"
         " rate, cost, tokens, latency."),
        ("preview", "imports", "Show how a source's first rows would import; writes nothing."),
        ("run", "runs", "Run HARNESS on every case of DATASET, grade the answers and print the"
         " scorecard."),
        ("migrate", "server", "Create or upgrade the database schema to the newest revision."),
        ("serve", "server", "Serve the dashboard, the HTTP API and MCP with uvicorn, plus the"
         " runs worker."),
        ("worker", "server", "Execute queued runs without serving HTTP: one more worker on a"
         " shared PostgreSQL."),
        ("mcp", "server", "Serve MCP over stdio: one tool per operation, as BENCHBOOK_API_KEY's"
         " user or the local admin."),
        ("users", "accounts", "Create and list users, set passwords (installation-wide)."),
        ("workspaces", "accounts", "Create and list workspaces."),
        ("members", "accounts", "Add members to a workspace, change their role, remove them."),
        ("keys", "accounts", "Create, list and revoke API keys (bb_…)."),
        ("secrets", "accounts", "Set, list and delete workspace secrets (values are"
         " write-only)."),
        ("datasets", "datasets", "Browse, diff, export, tag and delete dataset versions."),
        ("harnesses", "harnesses", "Harnesses: the agents under evaluation, versioned."),
        ("graders", "graders", "Registered graders: commands admins vouch for, versioned."),
        ("environments", "graders", "Environment recipes: setup and test commands,"
         " versioned."),
        ("endpoints", "graders", "Model endpoints judges and openai harnesses may call."),
        ("benchmarks", "imports", "The first-party benchmark catalog."),
        ("localization", "localization", "Code localization: the upstream ContextBench"
         " scorer's files and numbers beside ours."),
        ("mirrors", "mirrors", "Local git mirrors that repository checkouts come from."),
        ("recipes", "recipes", "Registered recipes: source + mapping + graders, versioned."),
        ("runs", "runs", "Evaluation runs: list, show, cases, trace, export, resume, retry,"
         " cancel, rescore, scorecard, tag, import-inspect, import-lm-eval."),
        ("swebench", "swebench", "SWE-bench grading: official predictions, harness, reports."),
    )
}  # fmt: skip


class LazyGroup(TyperGroup):
    """The root group: imports a command's module when the command is resolved.

    Its ``--help`` lists :data:`COMMANDS` in click's plain layout (typer's rich one imports
    rich and markdown-it, ~0.1 s), so the listing needs no command module.
    """

    def list_commands(self, ctx: _click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: _click.Context, cmd_name: str) -> _click.Command | None:
        command = self.commands.get(cmd_name)
        entry = COMMANDS.get(cmd_name)
        if command is None and entry is not None:
            importlib.import_module(entry.module)
            for name, loaded in typer.main.get_group(app).commands.items():
                self.commands.setdefault(name, loaded)
            command = self.commands.get(cmd_name)
        return command

    def format_help(self, ctx: _click.Context, formatter: _click.HelpFormatter) -> None:
        _click.Command.format_help(self, ctx, formatter)

    def parse_args(self, ctx: _click.Context, args: list[str]) -> list[str]:
        """``benchbook`` alone prints the help on stdout and exits 2 (typer's rich layout
        printed it while formatting; the plain one only returns it)."""
        if not args and self.no_args_is_help and not ctx.resilient_parsing:
            _click.echo(ctx.get_help(), color=ctx.color)
            ctx.exit(2)
        return super().parse_args(ctx, args)

    def invoke(self, ctx: _click.Context) -> Any:
        """A bad setting (``BENCHBOOK_SANDBOX=maybe``) is one ``error invalid_input: …`` line
        naming the environment variable, and exit code 2, not pydantic's traceback."""
        try:
            return super().invoke(ctx)
        except Exception as exc:
            if "pydantic" not in sys.modules:
                raise
            from pydantic import ValidationError

            if not isinstance(exc, ValidationError) or exc.title != "Settings":
                raise
            from benchbook.errors import InvalidInput
            from benchbook.settings import settings_error

            print_error(InvalidInput(settings_error(exc)), as_json=False)
            ctx.exit(2)

    def format_commands(self, ctx: _click.Context, formatter: _click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, entry.help) for name, entry in COMMANDS.items()])

    def resolve_command(
        self, ctx: _click.Context, args: list[str]
    ) -> tuple[str | None, _click.Command | None, list[str]]:
        try:
            return self._click_resolve_command(ctx, args)
        except _click.exceptions.UsageError as exc:
            matches = get_close_matches(args[0], list(COMMANDS)) if args else []
            if matches:
                suggestions = ", ".join(f"{m!r}" for m in matches)
                exc.message = f"{exc.message.rstrip('.')}. Did you mean {suggestions}?"
            raise


app = typer.Typer(
    name="benchbook",
    cls=LazyGroup,
    help="Versioned evaluation datasets and the evaluations run on them.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


def _print_version(value: bool) -> None:
    if value:
        sys.stdout.write(f"benchbook {__version__}\n")
        raise typer.Exit()


@app.callback()
def main(
    version: bool = typer.Option(
        False,
        "--version",
        callback=_print_version,
        is_eager=True,
        help="Print the version (benchbook X.Y.Z) and exit.",
    ),
) -> None:
    """Versioned evaluation datasets and the evaluations run on them."""


def _make_console(stderr: bool) -> Console:
    """The console of stdout (or stderr) for the environment as it is now: rich reads
    ``COLUMNS`` once, when a console is made, so one is kept per ``COLUMNS`` value and per
    terminal-or-pipe (a process that invokes the CLI twice in different environments, as a test
    runner does, gets the width each call asked for)."""
    import os

    return _console_for(stderr, os.environ.get("COLUMNS"), sys.stdout.isatty())


def _in_pipe() -> bool:
    """True when stdout is not a terminal and no ``COLUMNS`` is set: tables are then
    :data:`PIPE_WIDTH` wide and previews whole."""
    import os

    return "COLUMNS" not in os.environ and not sys.stdout.isatty()


@cache
def _console_for(stderr: bool, columns: str | None, tty: bool) -> Console:
    from rich.console import Console

    if stderr:
        return Console(stderr=True, emoji=False, soft_wrap=True)
    return Console(emoji=False, width=PIPE_WIDTH if columns is None and not tty else None)


PIPE_WIDTH = 100_000
"""Columns of stdout when it is not a terminal: wide enough that no table cell wraps or is cut
(``benchbook runs list | cat`` keeps every value whole); an explicit ``COLUMNS`` still wins."""


class _LazyConsole:
    """Stands for the rich ``Console`` of stdout or stderr, made on first attribute access:
    importing rich (~0.1 s) is paid only by a command that prints through it, not by
    ``--help``, ``--version`` or ``--json`` output. Pass :func:`real_console` to rich objects
    that take a ``console=``."""

    def __init__(self, stderr: bool) -> None:
        self._stderr = stderr

    def __getattr__(self, name: str) -> Any:
        return getattr(_make_console(self._stderr), name)


def real_console(stderr: bool = False) -> Console:
    """The rich Console that ``console`` (or ``err_console``) stands for."""
    return _make_console(stderr)


def escape(text: str) -> str:
    """``rich.markup.escape``: ``text`` with its ``[`` markup escaped (rich imported on use)."""
    from rich.markup import escape as rich_escape

    return rich_escape(text)


console = cast("Console", _LazyConsole(stderr=False))
err_console = cast("Console", _LazyConsole(stderr=True))


F = TypeVar("F", bound=Callable[..., Any])


def local_context() -> Context:
    """The local admin context on the configured database (migrated on open)."""
    from benchbook.services.context import local_admin_context, open_engine
    from benchbook.settings import get_settings

    settings = get_settings()
    return local_admin_context(open_engine(settings), settings)


def emit_json(value: Any) -> None:
    """Print a pydantic model, list of models or plain value as indented JSON."""
    from pydantic import BaseModel

    def plain(v: Any) -> Any:
        if isinstance(v, BaseModel):
            return v.model_dump(mode="json")
        if isinstance(v, list):
            return [plain(x) for x in v]
        return v

    sys.stdout.write(orjson.dumps(plain(value), option=orjson.OPT_INDENT_2).decode() + "\n")


def cell(value: object) -> Text:
    """``value`` as plain text for a table cell or a line: brackets and ``:codes:`` verbatim."""
    from rich.text import Text

    return Text(str(value))


def make_table(*columns: str | Column) -> Table:
    """A rich table whose cells wrap at spaces and fold a word wider than its column onto the
    next line: a value is never cut, and no cell ends in an ellipsis. A ``Column`` keeps its
    other settings (``min_width`` for ids that should stay on one line)."""
    from rich.table import Column, Table

    made = [c if isinstance(c, Column) else Column(c) for c in columns]
    for c in made:
        c.overflow, c.no_wrap = "fold", False
    return Table(*made)


def id_column(header: str, ids: list[str]) -> Column:
    """A column as wide as the longest of ``ids`` (at least the header): ids stay whole on one
    line while the other columns of a :func:`make_table` wrap into what width is left."""
    from rich.table import Column

    return Column(header, min_width=max(map(len, ids), default=len(header)))


def shorten(text: str, width: int) -> str:
    """``text`` on one line, shortened at a word boundary to at most ``width`` characters
    (`` …`` marks the cut) for a table's preview column; ``--json`` shows it whole. A first
    word longer than ``width`` is kept whole (the table folds it). In a pipe (stdout not a
    terminal, no ``COLUMNS``: :func:`_in_pipe`) nothing is cut: the whole text on one line."""
    import textwrap

    if _in_pipe():
        return " ".join(text.split())
    short = textwrap.shorten(text, width, placeholder=" …")
    return short if short != "…" else text.split()[0] + " …"


def cut(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, the last one ``…`` when something was cut."""
    return text if len(text) <= width else text[: width - 1] + "…"


def count(n: int, noun: str) -> str:
    """``n`` with thousands separators and ``noun`` pluralized: ``1 case``, ``1,319 cases``."""
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


def print_outcome(state: str, dataset_id: str, version: str, cases: int) -> None:
    """The one outcome line of every command that writes a dataset version.

    ``state`` is ``registered``, ``unchanged`` or ``revived``: ``registered gsm8k@1.0.0
    (1,319 cases)``.
    """
    from rich.markup import escape

    _make_console(False).print(
        f"{state} [bold]{escape(dataset_id)}@{escape(version)}[/] ({count(cases, 'case')})"
    )


def print_error(exc: BenchbookError, as_json: bool) -> None:
    """Report ``exc``: the envelope as JSON on stdout, or ``error CODE: MESSAGE`` on stderr
    followed by up to 20 ``details.errors`` lines (``  - path: message``), leaving out those the
    message already says (it names their path and their message)."""
    from rich.markup import escape

    if as_json:
        sys.stdout.write(orjson.dumps(exc.to_dict(), default=str).decode() + "\n")
        return
    _make_console(True).print(
        f"[bold red]error[/] [red]{escape(exc.code)}[/]: {escape(exc.message)}"
    )
    for issue in exc.details.get("errors", [])[:20]:
        where = issue.get("path") or issue.get("row") or ""
        line = f"{where}: {issue.get('message', issue)}"
        path, said = issue.get("path"), issue.get("message")
        named = isinstance(path, str) and isinstance(said, str) and path and said
        if (
            line == exc.message
            or said == exc.message
            or (named and path in exc.message and said in exc.message)
        ):
            continue  # the message already says it (one error over a limit: one line)
        _make_console(True).print(f"  - {line}", markup=False)


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
#: ``--json`` on a command whose output is JSON anyway, so a script may pass it everywhere.
ALREADY_JSON = typer.Option(False, "--json", help="Accepted for scripts: the output is JSON.")


def read_json_file(path: Path) -> Any:
    """Parse a JSON file. Raises InvalidInput naming the file (unreadable or not JSON)."""
    try:
        return orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise InvalidInput(f"{path}: not valid JSON: {exc}") from exc
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}") from exc
