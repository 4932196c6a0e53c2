"""Security headers on every dashboard response (issue 9 item 15).

Pages load only the app's own files (``/static``): no inline script or event handler exists in
the templates (the import wizard's catalog is a ``<script type="application/json">`` data
block, which a CSP does not execute), so ``script-src 'self'`` holds without ``unsafe-inline``.
``/api`` (whose interactive docs load Swagger UI from a CDN with an inline script) and ``/mcp``
keep their own answers; they only get ``nosniff``.
"""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
        "object-src 'none'",
    )
)
PAGE_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
}
NON_PAGE_PREFIXES = ("/api", "/mcp")


class SecurityHeaders:
    """ASGI middleware: ``X-Content-Type-Options: nosniff`` on every answer, and
    :data:`PAGE_HEADERS` on everything outside ``/api`` and ``/mcp``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        page = not str(scope["path"]).startswith(NON_PAGE_PREFIXES)

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers.setdefault("X-Content-Type-Options", "nosniff")
                if page:
                    for name, value in PAGE_HEADERS.items():
                        headers.setdefault(name, value)
            await send(message)

        await self.app(scope, receive, with_headers)
