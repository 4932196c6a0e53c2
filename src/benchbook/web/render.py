"""Rendering pages: one Jinja2 environment, the layout's shared variables, small filters.

Templates live in ``web/templates`` (package data) and autoescape everything; values that
come from datasets are never marked safe. The layout needs the caller (name, workspace, role),
the workspaces they can switch to and the CSRF token for its forms.
"""

from __future__ import annotations

import contextlib
import importlib.util
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
from fastapi import Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

import benchbook
from benchbook.errors import BenchbookError
from benchbook.services.accounts import list_members, list_workspaces
from benchbook.web.session import Page

HERE = Path(__file__).parent
TEMPLATES = Jinja2Templates(directory=str(HERE / "templates"))
STATIC_DIR = HERE / "static"
#: The recipes nav item appears once ``services/recipes.py`` exists.
HAS_RECIPES = importlib.util.find_spec("benchbook.services.recipes") is not None


def when(value: datetime | None) -> str:
    """``2025-11-29 22:40 UTC`` for a timestamp (naive values are taken as UTC)."""
    if value is None:
        return "—"
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def ago(value: datetime | None) -> str:
    """A short relative time (``3 min ago``) for timelines and lists."""
    if value is None:
        return "—"
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    seconds = int((datetime.now(UTC) - value).total_seconds())
    for size, unit in ((86400, "d"), (3600, "h"), (60, "min")):
        if seconds >= size:
            return f"{seconds // size} {unit} ago"
    return "just now"


def pretty_json(value: Any) -> str:
    """Indented JSON for ``<pre>`` blocks (strings shown as JSON strings)."""
    return orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode()


def short_text(value: Any, limit: int = 160) -> str:
    """One line of at most ``limit`` characters for table cells."""
    text = value if isinstance(value, str) else orjson.dumps(value).decode()
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


TEMPLATES.env.filters.update(when=when, ago=ago, pretty_json=pretty_json, short=short_text)
TEMPLATES.env.globals.update(version=benchbook.__version__, has_recipes=HAS_RECIPES)


def people(page: Page) -> dict[str, str]:
    """user id → display name for the caller's workspace (actors, creators, authors)."""
    names = {"local-admin": "Local admin", page.user_id: page.ctx.principal.display_name}
    with contextlib.suppress(BenchbookError):
        names.update({m.user_id: m.display_name for m in list_members(page.ctx)})
    return names


def render(
    request: Request, page: Page | None, name: str, status_code: int = 200, **values: Any
) -> HTMLResponse:
    """Render ``name`` with the layout's variables for ``page`` (None: logged-out pages)."""
    layout: dict[str, Any] = {"page": page, "nav": values.pop("nav", "")}
    if page is not None:
        try:
            layout["workspaces"] = [w.id for w in list_workspaces(page.ctx)]
        except BenchbookError:
            layout["workspaces"] = [page.ctx.workspace]
        if page.ctx.workspace not in layout["workspaces"]:
            layout["workspaces"].insert(0, page.ctx.workspace)
    return TEMPLATES.TemplateResponse(request, name, {**layout, **values}, status_code=status_code)
