"""``benchbook serve``, ``benchbook mcp`` and ``benchbook migrate``: the commands that start a
server. They launch the app composed in ``benchbook.app`` (the only import of the CLI above the
transports, named in the import-linter ``independence`` contract's ``ignore_imports``).
"""

from __future__ import annotations

import anyio
import typer

from benchbook.cli.app import JSON_OPTION, app, console, emit_json, escape, handle_errors
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


@app.command()
@handle_errors
def serve(
    host: str | None = typer.Option(None, help="Interface (default 127.0.0.1)."),
    port: int | None = typer.Option(None, min=1, max=65535, help="Port (default 8000)."),
) -> None:
    """Serve the dashboard, the HTTP API and MCP with uvicorn, plus the runs worker."""
    import uvicorn

    from benchbook.app import create_app

    settings = get_settings()
    application = create_app(settings)
    password = bootstrap_admin(application.state.engine)
    if password is not None:
        console.print(
            f"first start: log in as [bold]{escape(BOOTSTRAP_EMAIL)}[/] with password "
            f"[bold]{escape(password)}[/]"
            " (shown once; create your own users with 'benchbook users create')"
        )
    if settings.run_worker:
        from benchbook.services.run_worker import RunWorker
        from benchbook.services.sandboxing import check_sandbox

        check_sandbox(application.state.engine, settings)  # refuse before serving anything

        # Executes runs started over HTTP/MCP, and picks up runs a dead process left running.
        RunWorker(application.state.engine, settings).start()
    # X-Forwarded-For only from the proxies named in BENCHBOOK_TRUSTED_PROXIES: uvicorn's
    # default believes any loopback peer, which let one local client pose as many addresses.
    uvicorn.run(
        application,
        host=host or settings.host,
        port=port or settings.port,
        proxy_headers=bool(settings.trusted_proxies),
        forwarded_allow_ips=",".join(settings.trusted_proxies) or "",
    )


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
