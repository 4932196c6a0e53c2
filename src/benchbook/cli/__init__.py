"""The ``benchbook`` command line (typer + rich). Calls services as the local admin."""

from benchbook.cli import (  # noqa: F401  (each module registers its commands)
    accounts,
    compare,
    datasets,
    harnesses,
    imports,
    recipes,
    runs,
    server,
)
from benchbook.cli.app import app

__all__ = ["app"]
