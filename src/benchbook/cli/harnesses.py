"""``benchbook harnesses register FILE | list | show ID [VERSION] | delete ID VERSION``."""

from __future__ import annotations

import typer

from benchbook.cli import registered
from benchbook.cli.app import app
from benchbook.services import harnesses as svc
from benchbook.transports import nouns

harnesses_app = typer.Typer(help="Harnesses: the agents under evaluation, versioned.")
app.add_typer(harnesses_app, name="harnesses")

registered.add_commands(
    harnesses_app,
    registered.CliNoun(
        ops=nouns.HARNESSES,
        title="harness",
        parse=svc.parse_harness,
        columns=("id", "kind", "latest", "versions", "owner", "description"),
        row=lambda h: (
            h.id,
            h.kind,
            h.latest,
            ", ".join(h.versions),
            h.workspace,
            h.description or "",
        ),
        docs={
            "register": "Register a harness version (identical again: unchanged; different:"
            " conflict).",
            "list": "Harnesses: own ids plus _shared ones not shadowed by own ids.",
            "show": "One harness version as JSON.",
            "delete": "Tombstone one harness version (runs that used it stay readable).",
        },
        file_help="A harness JSON file {id, version, kind, config}.",
        id_param="harness_id",
    ),
)
