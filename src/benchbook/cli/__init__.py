"""The ``benchbook`` command line (typer + rich). Calls services as the local admin.

Command modules are imported when their command runs (see :data:`benchbook.cli.app.COMMANDS`).
"""

from benchbook.cli.app import app

__all__ = ["app"]
