"""Settings: the only reader of environment variables.

Every setting can be given as an environment variable with the ``BENCHBOOK_`` prefix
(``BENCHBOOK_HOME``), except ``DATABASE_URL``, ``HF_TOKEN`` and ``HF_ENDPOINT`` which keep
their conventional names.
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache
from pathlib import Path
from typing import Annotated

from pydantic import AliasChoices, Field, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict


class Settings(BaseSettings):
    """Runtime configuration.

    Attributes:
        home: data directory; the embedded SQLite database lives at ``home/benchbook.db``.
        database_url: SQLAlchemy URL; when unset, SQLite under ``home`` is used.
        host, port: where ``benchbook serve`` listens.
        max_upload_bytes: largest accepted request body (bytes) for uploads.
        max_upload_files: most file parts one upload may hold (several task files of a folder
            benchmark); past it the upload is refused while streaming (413).
        max_record_bytes, max_document_bytes, max_decompressed_bytes: bounds on one JSONL/CSV
            line, a JSON document (or gzip Parquet file) read whole, and a gzip file's
            decompressed content; past one a source read is 413 (``datasets/sources/limits.py``).
        import_max_rows, import_max_bytes: the most cases, and bytes of case bodies (canonical
            JSON), one import may store (5,000,000 and 4 GiB); past either the import stops
            with 413 naming the setting and the line, and stores nothing.
        max_page_bytes: bound on the case bodies of one page of ``get_dataset`` (characters;
            a page always holds at least one case).
        login_failures_per_account, login_failures_per_address: failed logins allowed per
            account (email) and per client address within ``login_window_s`` seconds; past
            either, logins answer 429 with ``Retry-After`` until the window moves on.
        login_failures_per_device: failed logins allowed within the window from a device
            that logged in as that account before (its device cookie); such a device is not
            locked out by the account's failures from elsewhere (docs/accounts.md).
        trusted_proxies: the peers (IP addresses or CIDR networks, comma-separated in
            ``BENCHBOOK_TRUSTED_PROXIES``) whose ``X-Forwarded-For``/``X-Forwarded-Proto``
            ``benchbook serve`` believes; empty (the default), none is believed, loopback
            included, and the client address is the peer's.
        hf_endpoint: Hugging Face Hub base URL (``HF_ENDPOINT``).
        hf_viewer_endpoint: dataset-viewer base URL.
        hf_token: token from the environment, the last fallback after user and workspace secrets.
        secret_key: encrypts stored secrets and signs sessions; when unset, a random key is
            generated into ``home/secret.key`` on first use and reused.
        api_key: the ``bb_…`` key ``benchbook mcp`` (stdio) acts with (``BENCHBOOK_API_KEY``);
            unset, it acts as the local admin.
        chromium: the browser binary started for ``browser`` environments.
        work_root: parent of per-case private working directories (default: the system
            temporary directory's ``benchbook-work``).
        pricing_file: a pricing table JSON replacing the shipped one (SPEC H.6).
        trace_file_bytes: traces larger than this (uncompressed JSON bytes) are kept as files
            under ``home/traces`` (default 1 MiB).
        request_threads: how many requests one server process runs at once in its thread pool
            (default 8; every route and page that reads the database runs there); the others
            wait in arrival order. Starlette's default is 40: the handlers are Python under one
            GIL, so 40 interleaved requests each took ~40× its own CPU time, and the heaviest
            (a run report) set the tail — 50 clients on one process: p99 2.3-2.5 s with 40
            threads, ~1 s with 4-8 (``bench/load.py``, docs/benchmarks.md). More helps only
            handlers that wait on the network (a Hugging Face search).
        run_worker: whether ``benchbook serve`` executes queued runs in the background.
        run_lease_s: how long a claim on a run (or an import job) holds without renewal
            (seconds, default 30); once it lapses another server's worker takes the run over.
        run_lease_renew_s: how often the holder renews its claims (seconds, default 10; must
            be shorter than ``run_lease_s``).
        worker_host: the host part of worker ids (default: the host name). A run held by a
            process of the same host is taken over as soon as that process is gone, without
            waiting for its lease; give replicas that share a host name but not a process
            table (containers) distinct values.
        contextbench_scorer_cmd: the upstream ContextBench scorer command line
            (``python -m contextbench.evaluate`` in its own Python ≤ 3.11 environment) that
            ``score_localization_upstream`` runs when the request names none.
        swebench_python: the Python that has the ``swebench`` package, for
            ``evaluate_swebench_run`` (default: this interpreter).
        sqlite_busy_timeout_s: how long an SQLite write waits for another writer (a long
            import) before it is refused as 503 ``unavailable`` with ``Retry-After``; reads
            never wait (WAL).
        sandbox: run every case process (harness, grader, setup line, browser) inside
            bubblewrap (default on). ``BENCHBOOK_SANDBOX=off`` is for a single-user install only:
            refused when the installation has more than one user or workspace, or its one
            user is not an installation admin (``docs/security.md``).
        bwrap: the bubblewrap binary (Debian's ``bubblewrap`` package).
        sandbox_cpu_s, sandbox_memory_mb, sandbox_processes, sandbox_file_size_mb: default
            limits of a sandboxed process tree — CPU seconds, address space (MiB), processes
            and threads, largest file written (MiB); ``0`` = unlimited. A case's
            ``resources`` may only lower the first two.
        sandbox_ro_paths: extra paths every sandbox sees read-only (toolchains outside
            ``/usr``); never ``home`` or anything holding it.
        browser_allowed_hosts: the hosts browser cases may open, each ``host`` or
            ``host:port``; a name must resolve to public addresses only, while a loopback,
            link-local or private address is allowed only when listed as that IP literal
            (``127.0.0.1:8080``). Empty (default): only ``about:``/``data:`` pages.
        git_allowed_hosts: the same rules for the server's git (a ``repo`` case's clone or
            fetch): public hosts need no entry; a loopback or private git server is reached
            only when listed as that IP literal. Empty (default): public hosts and mirrors.
    """

    model_config = SettingsConfigDict(env_prefix="BENCHBOOK_", extra="ignore")

    home: Path = Field(default=Path("benchbook-data"))
    database_url: str | None = Field(
        default=None, validation_alias=AliasChoices("DATABASE_URL", "BENCHBOOK_DATABASE_URL")
    )
    host: str = "127.0.0.1"
    port: int = 8000
    max_upload_bytes: int = 512 * 1024 * 1024
    max_upload_files: int = 10_000
    max_record_bytes: int = 64 << 20
    max_page_bytes: int = 16 << 20
    import_max_rows: int = Field(default=5_000_000, gt=0)
    import_max_bytes: int = Field(default=4 << 30, gt=0)
    max_document_bytes: int = 256 << 20
    max_decompressed_bytes: int = 8 << 30
    login_failures_per_account: int = 5
    login_failures_per_address: int = 20
    login_failures_per_device: int = 5
    login_window_s: int = 300
    trusted_proxies: Annotated[list[str], NoDecode] = Field(default_factory=list)
    sqlite_busy_timeout_s: float = Field(default=30.0, gt=0)
    hf_endpoint: str = Field(
        default="https://huggingface.co",
        validation_alias=AliasChoices("HF_ENDPOINT", "BENCHBOOK_HF_ENDPOINT"),
    )
    hf_viewer_endpoint: str = "https://datasets-server.huggingface.co"
    hf_token: str | None = Field(
        default=None, validation_alias=AliasChoices("HF_TOKEN", "BENCHBOOK_HF_TOKEN")
    )
    secret_key: str | None = None
    api_key: str | None = None
    chromium: str = "/usr/bin/chromium"
    work_root: Path | None = None
    pricing_file: Path | None = None
    trace_file_bytes: int = 1024 * 1024
    request_threads: int = Field(default=8, ge=1, le=1000)
    run_worker: bool = True
    run_lease_s: float = Field(default=30.0, gt=0)
    run_lease_renew_s: float = Field(default=10.0, gt=0)
    worker_host: str | None = Field(default=None, pattern=r"^[^:\s]{1,40}$")
    contextbench_scorer_cmd: str | None = None
    swebench_python: str | None = None
    sandbox: bool = True
    bwrap: str = "/usr/bin/bwrap"
    sandbox_cpu_s: int = Field(default=3600, ge=0)
    sandbox_memory_mb: int = Field(default=8192, ge=0)
    sandbox_processes: int = Field(default=1024, ge=0)
    sandbox_file_size_mb: int = Field(default=1024, ge=0)
    sandbox_ro_paths: list[Path] = Field(default_factory=list)
    browser_allowed_hosts: list[str] = Field(default_factory=list)
    git_allowed_hosts: list[str] = Field(default_factory=list)

    @field_validator("trusted_proxies", mode="before")
    @classmethod
    def _proxy_networks(cls, value: object) -> object:
        items = value.split(",") if isinstance(value, str) else value
        if not isinstance(items, list):
            return value
        cleaned = [str(item).strip() for item in items if str(item).strip()]
        for item in cleaned:
            try:
                ipaddress.ip_network(item, strict=False)
            except ValueError as exc:
                raise ValueError(
                    f"BENCHBOOK_TRUSTED_PROXIES: {item!r} is not an IP address or network"
                ) from exc
        return cleaned

    @model_validator(mode="after")
    def _renew_within_lease(self) -> Settings:
        if self.run_lease_renew_s >= self.run_lease_s:
            raise ValueError(
                f"BENCHBOOK_RUN_LEASE_RENEW_S ({self.run_lease_renew_s}) must be shorter than"
                f" BENCHBOOK_RUN_LEASE_S ({self.run_lease_s})"
            )
        return self

    def resolved_database_url(self) -> str:
        """The database URL in force: ``DATABASE_URL`` or SQLite at ``home/benchbook.db``."""
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.home / 'benchbook.db').resolve()}"


def settings_error(exc: ValidationError) -> str:
    """``exc`` (raised by :class:`Settings`) as one line naming each bad environment variable:
    ``BENCHBOOK_SANDBOX: Input should be a valid boolean, … (got 'maybe')``."""
    prefix = str(Settings.model_config.get("env_prefix") or "")
    parts = []
    for error in exc.errors():
        name = str(error["loc"][0]) if error["loc"] else ""
        env = f"{prefix}{name}".upper() if name in Settings.model_fields else name.upper()
        got = f" (got {error['input']!r})" if name and "input" in error else ""
        parts.append(f"{env}: {error['msg']}{got}" if name else str(error["msg"]))
    return "; ".join(parts)


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read once from the environment."""
    return Settings()
