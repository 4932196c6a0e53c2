"""``benchbook serve``, ``benchbook mcp`` and ``benchbook migrate``: the commands that start a
server. They launch the app composed in ``benchbook.app`` (the only import of the CLI above the
transports, named in the import-linter ``independence`` contract's ``ignore_imports``).
"""

from __future__ import annotations

from typing import Any

import anyio
import typer

from benchbook.cli.app import JSON_OPTION, app, console, emit_json, escape, handle_errors
from benchbook.errors import Conflict, InvalidInput
from benchbook.services.accounts import BOOTSTRAP_EMAIL, bootstrap_admin
from benchbook.services.context import open_engine
from benchbook.settings import get_settings


@app.command()
@handle_errors
def migrate(json: bool = JSON_OPTION) -> None:
    """Create or upgrade the database schema to the newest revision.

    ``--json`` prints ``{"database_url": URL, "at_head": true}``.
    """
    settings = get_settings()
    open_engine(settings)
    if json:
        return emit_json({"database_url": settings.resolved_database_url(), "at_head": True})
    console.print(f"database at head: {settings.resolved_database_url()}", markup=False)


KEEP_ALIVE_S = 75
"""Seconds an idle HTTP/1.1 connection stays open (uvicorn's default is 5). Longer than the
clients and proxies in front keep theirs idle (httpx and requests 5 s, load balancers ~60 s), so
the client always closes an idle connection first: at equal timeouts a request sent on a
connection the server was closing that instant failed ("server disconnected")."""


@app.command()
@handle_errors
def serve(
    host: str | None = typer.Option(None, help="Interface (default 127.0.0.1)."),
    port: int | None = typer.Option(None, min=1, max=65535, help="Port (default 8000)."),
    workers: int = typer.Option(
        1,
        min=1,
        max=64,
        help="Server processes sharing the port (PostgreSQL only; one runs worker in the parent)."
        " See docs/scale.md.",
    ),
) -> None:
    """Serve the dashboard, the HTTP API and MCP with uvicorn, plus the runs worker.

    ``--workers N`` (N > 1) starts N uvicorn processes that share the port, each with its own
    app and connection pool over one PostgreSQL database; the parent migrates, creates the first
    admin, runs the runs worker and stops the children when it stops. Refused (invalid_input)
    on SQLite.
    """
    import uvicorn

    settings = get_settings()
    if workers > 1 and settings.resolved_database_url().startswith("sqlite"):
        raise InvalidInput(
            f"--workers {workers}: several server processes need PostgreSQL. SQLite has one"
            " writer for the whole file, so the processes would queue on its write lock and"
            " gain nothing; serve SQLite with one process, or set DATABASE_URL to PostgreSQL"
            " (docs/scale.md)",
            {"errors": [{"path": "workers", "message": "more than 1 needs PostgreSQL"}]},
        )
    if workers > 1:
        engine = open_engine(settings)  # migrate once, before the children start
        application: Any = "benchbook.cli.server:worker_app"
    else:
        from benchbook.app import create_app

        application = create_app(settings)
        engine = application.state.engine
    bind_host, bind_port = host or settings.host, port or settings.port
    _check_port_free(bind_host, bind_port)  # before the first admin's password is shown
    password = bootstrap_admin(engine)
    if password is not None:
        console.print(
            f"first start: log in as [bold]{escape(BOOTSTRAP_EMAIL)}[/] with password "
            f"[bold]{escape(password)}[/]"
            " (shown once; create your own users with 'benchbook users create')"
        )
    if settings.run_worker:
        from benchbook.services.run_worker import RunWorker
        from benchbook.services.sandboxing import check_sandbox

        check_sandbox(engine, settings)  # refuse before serving anything

        # Executes runs started over HTTP/MCP, and picks up runs a dead process left running.
        RunWorker(engine, settings).start()
    # X-Forwarded-For only from the proxies named in BENCHBOOK_TRUSTED_PROXIES: uvicorn's
    # default believes any loopback peer, which let one local client pose as many addresses.
    uvicorn.run(
        application,
        host=bind_host,
        port=bind_port,
        proxy_headers=bool(settings.trusted_proxies),
        forwarded_allow_ips=",".join(settings.trusted_proxies) or "",
        timeout_keep_alive=KEEP_ALIVE_S,
        workers=workers if workers > 1 else None,
        factory=workers > 1,
    )


def _check_port_free(host: str, port: int) -> None:
    """Bind ``host:port`` once (as uvicorn will, ``SO_REUSEADDR``) and let it go, so a port in
    use is refused before anything is created: the first start's admin password was printed
    "shown once" and only then did uvicorn fail with ``address already in use``.

    Raises:
        Conflict: the address cannot be bound (in use, or not an address of this machine).
    """
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise Conflict(
                f"cannot serve on {host}:{port}: {exc.strerror or exc}; pick another port with"
                " --port or BENCHBOOK_PORT",
                {"host": host, "port": port},
            ) from exc


def worker_app() -> Any:
    """The app of one ``serve --workers N`` process (uvicorn's factory, called in the child):
    built from the environment like the parent's, and ended by the kernel with SIGTERM if the
    parent dies without stopping it (``PR_SET_PDEATHSIG``), so no orphan keeps the port."""
    import ctypes
    import signal
    import sys

    if sys.platform == "linux":
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG
    from benchbook.app import create_app

    return create_app()


@app.command()
@handle_errors
def worker(
    poll_s: float = typer.Option(1.0, min=0.05, help="Seconds between polls when idle."),
) -> None:
    """Execute queued runs without serving HTTP: one more worker on a shared PostgreSQL.

    Claims runs with a lease (BENCHBOOK_RUN_LEASE_S, renewed every BENCHBOOK_RUN_LEASE_RENEW_S)
    and takes over runs whose holder died; stops on Ctrl-C or SIGTERM (a run in progress is
    then taken over by another worker once its lease lapses). See docs/scale.md.
    """
    import signal

    from benchbook.services.run_worker import RunWorker
    from benchbook.services.sandboxing import check_sandbox

    settings = get_settings()
    engine = open_engine(settings)
    check_sandbox(engine, settings)
    runner = RunWorker(engine, settings, poll_s=poll_s)

    def interrupt(*_: object) -> None:
        raise KeyboardInterrupt  # like Ctrl-C: leave at once, even mid-run

    signal.signal(signal.SIGTERM, interrupt)
    url = engine.url.render_as_string(hide_password=True)
    console.print(f"runs worker {runner.holder} on {url}", markup=False, soft_wrap=True)
    try:
        runner.run()  # in this thread, until stopped
    except KeyboardInterrupt:
        pass
    finally:
        runner.stop()
        engine.dispose()


@app.command("mcp")
@handle_errors
def mcp_stdio() -> None:
    """Serve MCP over stdio: one tool per operation, as BENCHBOOK_API_KEY's user or the local admin.

    stdout carries only the protocol; see docs/mcp.md for client configuration.
    """
    from benchbook.app import run_mcp_stdio

    anyio.run(run_mcp_stdio, get_settings())
