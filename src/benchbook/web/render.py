"""Rendering pages: one Jinja2 environment, the layout's shared variables, small filters.

Templates live in ``web/templates`` (package data) and autoescape everything; values that
come from datasets are never marked safe. The layout needs the caller (name, workspace, role),
the workspaces they can switch to and the CSRF token for its forms.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import re
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import orjson
from fastapi import Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

import benchbook
from benchbook import numbers
from benchbook.contracts.diff import FieldChange
from benchbook.datasets.diff import changed_leaves
from benchbook.errors import BenchbookError
from benchbook.services.accounts import list_members, list_workspaces
from benchbook.services.comparisons import warm_comparisons
from benchbook.web.forms import forget_carried, take_notice
from benchbook.web.session import Page

HERE = Path(__file__).parent
TEMPLATES = Jinja2Templates(directory=str(HERE / "templates"))
STATIC_DIR = HERE / "static"


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


def answer_text(value: Any) -> str:
    """An ``expected`` answer for a page: text as is, any other JSON value as indented JSON
    (integers of any size keep their digits; ``true``/``null`` are JSON, not Python)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)


def is_patch(value: Any) -> bool:
    """True for a unified diff (``diff --git``, or ``--- ``/``+++ `` headers with ``@@`` hunks),
    such as SWE-bench's ``patch`` and ``test_patch``."""
    if not isinstance(value, str):
        return False
    head = value.lstrip()[:200]
    return head.startswith("diff --git") or (head.startswith("--- ") and "\n@@" in value)


#: Header lines of a (git) unified diff: ``diff --git``, ``index``, ``---``/``+++``, modes,
#: renames, binary files.
DIFF_HEADER = re.compile(
    r"^(diff --git |index |--- |\+\+\+ |new file mode|deleted file mode|similarity |rename "
    r"|old mode|new mode|Binary files )"
)


def patch_lines(value: str, limit: int | None = None) -> list[tuple[str, str]]:
    """``(kind, line)`` for each line of a unified diff (its first ``limit`` lines when given);
    kind is ``add``, ``del``, ``hunk``, ``file`` (a :data:`DIFF_HEADER` line) or ``ctx``."""
    found = []
    for line in value.splitlines()[:limit]:
        if DIFF_HEADER.match(line):
            kind = "file"
        elif line.startswith("@@"):
            kind = "hunk"
        elif line.startswith("+"):
            kind = "add"
        elif line.startswith("-"):
            kind = "del"
        else:
            kind = "ctx"
        found.append((kind, line))
    return found


def line_diff_lines(before: str, after: str) -> list[tuple[str, str]]:
    """A line diff of two strings as :func:`patch_lines` kinds (``difflib.unified_diff`` with
    two lines of context; its ``---``/``+++`` header left out)."""
    lines = difflib.unified_diff(before.splitlines(), after.splitlines(), n=2, lineterm="")
    return patch_lines("\n".join(list(lines)[2:]))


def leaves(changes: list[FieldChange]) -> list[tuple[str, Any, Any]]:
    """The changed leaves of field changes, ``(path, before, after)``
    (``datasets.diff.changed_leaves``)."""
    return list(changed_leaves(changes))


def json_summary(value: Any) -> str:
    """``object · 3 keys`` / ``array · 12 items`` / ``number`` for a collapsible JSON value."""
    if isinstance(value, dict):
        return f"object · {len(value):,} key{'' if len(value) == 1 else 's'}"
    if isinstance(value, list):
        return f"array · {len(value):,} item{'' if len(value) == 1 else 's'}"
    return "boolean" if isinstance(value, bool) else "null" if value is None else "number"


def short_text(value: Any, limit: int = 160) -> str:
    """One line of at most ``limit`` characters for table cells."""
    text = value if isinstance(value, str) else orjson.dumps(value).decode()
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def segment(value: Any) -> str:
    """``value`` as one URL path segment: everything but ``A-Za-z0-9_.-~`` percent-encoded
    (``/`` too). For dataset, recipe, version, key and secret ids in paths."""
    return quote(str(value), safe="")


def dataset_url(dataset_id: str, version: str | None = None) -> str:
    """``/datasets/{id}``, with ``?v=`` when ``version`` is given; each part percent-encoded."""
    url = "/datasets/" + segment(dataset_id)
    return f"{url}?v={quote(version, safe='')}" if version else url


def case_url(dataset_id: str, case_id: str, version: str) -> str:
    """The case page of ``case_id`` in ``dataset_id@version`` (a version or a tag).

    The route takes the rest of the path as the id, so ``/`` stays readable
    (``/datasets/osworld/cases/chrome/030eeff7?v=1.0.0``) unless a segment is empty, ``.`` or
    ``..`` (browsers fold those), then it is ``%2F`` as well; the server decodes either form to
    the same id. Spaces, ``#``, ``?``, ``%`` and non-ASCII are percent-encoded (UTF-8). An id
    that is only ``.`` or ``..`` cannot be a path segment at all and goes in ``?id=``.
    """
    return case_path(dataset_url(dataset_id) + "/cases/", case_id, "v=" + quote(version, safe=""))


def case_path(base: str, case_id: str, query: str) -> str:
    """``base`` + ``case_id`` as the rest of a path (see :func:`case_url`) + ``?query``."""
    if case_id in (".", ".."):
        return f"{base}?id={quote(case_id, safe='')}&{query}"
    parts = case_id.split("/")
    safe = "" if any(p in ("", ".", "..") for p in parts) else "/"
    return f"{base}{quote(case_id, safe=safe)}?{query}"


def run_url(run_id: str) -> str:
    """``/runs/{run_id}`` (percent-encoded)."""
    return "/runs/" + segment(run_id)


def run_case_url(run_id: str, case_id: str, sample: int = 0) -> str:
    """The trace page of one (case, sample) of a run: ``/runs/{id}/cases/{case_id}?sample=N``
    (the case id encoded as in :func:`case_url`)."""
    return case_path(run_url(run_id) + "/cases/", case_id, f"sample={int(sample)}")


def duration(ms: float | None) -> str:
    """Milliseconds as ``840 ms``, ``12.3 s`` or ``4 min 05 s``; None → ``—``."""
    if ms is None:
        return "—"
    if ms < 1000:
        return f"{ms:.0f} ms"
    seconds = ms / 1000
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes} min {rest:02d} s"


TEMPLATES.env.filters.update(
    when=when,
    ago=ago,
    pretty_json=pretty_json,
    short=short_text,
    seg=segment,
    answer=answer_text,
    is_patch=is_patch,
    patch_lines=patch_lines,
    json_summary=json_summary,
    leaves=leaves,
    percent=numbers.percent,
    usd=numbers.usd,
    tokens=numbers.tokens,
    number=numbers.number,
    duration=duration,
)
TEMPLATES.env.globals.update(
    benchbook_version=benchbook.__version__,
    case_url=case_url,
    dataset_url=dataset_url,
    line_diff_lines=line_diff_lines,
    run_url=run_url,
    run_case_url=run_case_url,
)


def people(page: Page) -> dict[str, str]:
    """user id → display name for the caller's workspace (actors, creators, authors)."""
    names = {"local-admin": "Local admin", page.user_id: page.ctx.principal.display_name}
    with contextlib.suppress(BenchbookError):
        names.update({m.user_id: m.display_name for m in list_members(page.ctx)})
    return names


def render(
    request: Request, page: Page | None, name: str, status_code: int = 200, **values: Any
) -> HTMLResponse:
    """Render ``name`` with the layout's variables for ``page`` (None: logged-out pages): the
    caller's workspaces, the notice a redirect carried here (``web/forms.done``, cleared with
    this response) and ``problem`` (a refused form's :class:`~benchbook.web.forms.Problem`,
    None unless given in ``values``)."""
    layout: dict[str, Any] = {
        "page": page,
        "nav": values.pop("nav", ""),
        "notice": take_notice(request),
        "problem": None,
    }
    if page is not None:
        try:
            layout["workspaces"] = [w.id for w in list_workspaces(page.ctx)]
        except BenchbookError:
            layout["workspaces"] = [page.ctx.workspace]
        if page.ctx.workspace not in layout["workspaces"]:
            layout["workspaces"].insert(0, page.ctx.workspace)
    response = TEMPLATES.TemplateResponse(
        request, name, {**layout, **values}, status_code=status_code
    )
    forget_carried(request, response)
    return response


WARMED_TEMPLATES = ("base.html", "compare.html")
"""Compiled at start-up by :func:`warm_first_views` (the compare page's; others on first use)."""
_warming: list[threading.Thread] = []


def warm_first_views() -> None:
    """Start, once per process, a background thread paying what the first compare page would
    otherwise pay on the request: numpy's import and first bootstrap
    (``services.comparisons.warm_comparisons``) and compiling its templates. Called at app
    start-up; returns at once (a request arriving meanwhile waits only for what is left)."""
    if _warming:
        return

    def warm() -> None:
        warm_comparisons()
        for name in WARMED_TEMPLATES:
            TEMPLATES.env.get_template(name)

    thread = threading.Thread(target=warm, name="benchbook-warm", daemon=True)
    _warming.append(thread)
    thread.start()
