"""The ``benchbook`` command line (typer + rich). Calls services as the local admin."""

from benchbook.cli import (  # noqa: F401  (each module registers its commands)
    accounts,
    compare,
    datasets,
    harnesses,
    imports,
    localization,
    mirrors,
    recipes,
    runs,
    server,
    swebench,
)
from benchbook.cli.app import app

__all__ = ["app"]
