"""The agent's ``browser`` tool: the case's Chromium over the DevTools protocol.

The browser environment starts Chromium (``runtime/environments/browser.py``) and hands its
endpoint as ``BENCHBOOK_CDP_URL``; each action here is one or two CDP commands on the most
recently active page (``/json/list``) through that module's :func:`cdp_call`. Actions:
``goto {url}`` (http, https or ``about:blank`` only — never ``file:`` or the browser's own
pages), ``click {selector}``, ``type {selector, text}``, ``text`` (the page's visible text, cut
to the tool output limit), ``title``, ``url``. Selectors and text are passed to the page as JSON
string literals, never spliced into script source.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any
from urllib.parse import urlsplit

import httpx

from benchbook.contracts.harness import AgentConfig
from benchbook.runtime.environments import Workspace
from benchbook.runtime.environments.browser import cdp_call
from benchbook.runtime.harnesses.agent.outcome import ToolOutcome
from benchbook.runtime.harnesses.agent.process import HeadTail

_SCRIPTS = {
    "title": "document.title",
    "url": "location.href",
    "text": "document.body ? document.body.innerText : ''",
}
_CLICK = (
    "(() => {{ const e = document.querySelector({sel}); if (!e) return 'no element matches';"
    " e.click(); return 'clicked'; }})()"
)
_TYPE = (
    "(() => {{ const e = document.querySelector({sel}); if (!e) return 'no element matches';"
    " e.focus(); e.value = {text}; e.dispatchEvent(new Event('input', {{bubbles: true}}));"
    " e.dispatchEvent(new Event('change', {{bubbles: true}})); return 'typed'; }})()"
)


async def _page(cdp_url: str) -> tuple[str, str]:
    """``(websocket URL, URL)`` of the most recently active page."""
    async with httpx.AsyncClient(timeout=10.0) as client:
        response = await client.get(f"{cdp_url}/json/list")
        response.raise_for_status()
        pages = [t for t in response.json() if t.get("type") == "page"]
    if not pages:
        raise RuntimeError("the browser has no open page")
    return str(pages[0]["webSocketDebuggerUrl"]), str(pages[0].get("url", ""))


async def _evaluate(socket: str, expression: str) -> Any:
    result = await cdp_call(
        socket, "Runtime.evaluate", {"expression": expression, "returnByValue": True}
    )
    value = result.get("result", {})
    if "exceptionDetails" in result:
        raise RuntimeError(f"the page raised: {result['exceptionDetails'].get('text', '?')}")
    return value.get("value") if isinstance(value, dict) else None


async def _goto(socket: str, url: str, timeout_s: float) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") and url != "about:blank":
        return "error: only http(s) URLs and about:blank may be opened"
    result = await cdp_call(socket, "Page.navigate", {"url": url})
    if result.get("errorText"):
        return f"error: {result['errorText']}"
    await _settle(socket, url, timeout_s)
    return f"opened {url}"


async def _settle(socket: str, url: str, timeout_s: float) -> None:
    """Wait (at most ``timeout_s``) until the document at ``url`` has loaded: the start URL
    may still be loading when the first action comes — the blank document before it is
    already ``complete`` — and a title read then is empty."""
    deadline = time.monotonic() + timeout_s
    probe = "[document.readyState, location.href]"
    while time.monotonic() < deadline:
        state = await _evaluate(socket, probe)
        loaded = isinstance(state, list) and state[0] == "complete"
        if loaded and (url in ("", "about:blank") or state[1] != "about:blank"):
            return
        await asyncio.sleep(0.05)


async def run_browser(
    arguments: dict[str, Any], workspace: Workspace, config: AgentConfig, timeout_s: float
) -> ToolOutcome:
    """One ``browser`` action (module docstring); failures are outcomes, never exceptions."""
    cdp_url = workspace.env_vars.get("BENCHBOOK_CDP_URL")
    if not cdp_url:
        return ToolOutcome(False, "error: this case has no browser")
    started = time.monotonic()
    action = arguments["action"]
    try:
        socket, page_url = await _page(cdp_url)
        if action == "goto":
            if "url" not in arguments:
                return ToolOutcome(False, "error: goto needs url")
            text = await asyncio.wait_for(_goto(socket, arguments["url"], timeout_s), timeout_s)
        elif action in _SCRIPTS:
            await asyncio.wait_for(_settle(socket, page_url, timeout_s), timeout_s)
            text = str(await asyncio.wait_for(_evaluate(socket, _SCRIPTS[action]), timeout_s))
        elif "selector" not in arguments:
            return ToolOutcome(False, f"error: {action} needs selector")
        else:
            await asyncio.wait_for(_settle(socket, page_url, timeout_s), timeout_s)
            sel = json.dumps(arguments["selector"])
            script = (
                _CLICK.format(sel=sel)
                if action == "click"
                else _TYPE.format(sel=sel, text=json.dumps(arguments.get("text", "")))
            )
            text = str(await asyncio.wait_for(_evaluate(socket, script), timeout_s))
    except TimeoutError:
        return ToolOutcome(False, f"error: timed out after {timeout_s:g} s", timed_out=True)
    except (RuntimeError, OSError, httpx.HTTPError, KeyError, ValueError) as exc:
        return ToolOutcome(False, f"error: {type(exc).__name__}: {exc}")
    keep = HeadTail(config.tool_output_bytes)
    keep.feed(text.encode("utf-8", "replace"))
    duration_ms = round((time.monotonic() - started) * 1000)
    ok = not text.startswith("error:") and text != "no element matches"
    return ToolOutcome(ok, keep.text(), cut_bytes=keep.cut_bytes, duration_ms=duration_ms)
