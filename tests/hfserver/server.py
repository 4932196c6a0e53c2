"""A real HTTP server on 127.0.0.1 speaking the Hub and dataset-viewer protocols.

The Hub lives at the root (``/api/…``, ``/datasets/{id}/resolve/…``) and the viewer under
``/viewer`` so that code mixing the two base URLs fails. Paths are split on ``/`` *before*
percent-decoding, so an encoded revision such as ``refs%2Fconvert%2Fparquet`` stays one segment.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from . import hub, viewer
from .model import FakeDataset
from .wire import Reply, json_reply


@dataclass(frozen=True)
class LoggedRequest:
    """One request as the server saw it."""

    method: str
    path: str
    query: dict[str, str]
    authorization: str | None


class HfServer:
    """The running server and its datasets; add or change datasets at any time."""

    def __init__(self, tree_page_size: int = 1000) -> None:
        self.datasets: dict[str, FakeDataset] = {}
        self.requests: list[LoggedRequest] = []
        self.tree_page_size = tree_page_size
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        """The Hub base URL (``HF_ENDPOINT``)."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def viewer_url(self) -> str:
        """The dataset-viewer base URL."""
        return f"{self.url}/viewer"

    def add(self, dataset: FakeDataset) -> FakeDataset:
        """Serve ``dataset`` (replacing one with the same id)."""
        self.datasets[dataset.repo_id] = dataset
        return dataset

    def calls(self, path_suffix: str) -> list[LoggedRequest]:
        """Logged requests whose path ends with ``path_suffix``."""
        return [r for r in self.requests if r.path.endswith(path_suffix)]

    def start(self) -> HfServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> HfServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def answer(self, method: str, raw_path: str, headers: Any) -> Reply:
        """Route one request (``raw_path`` still percent-encoded, with its query string)."""
        parts = urlsplit(raw_path)
        query = dict(parse_qsl(parts.query, keep_blank_values=True))
        segments = [unquote(s) for s in parts.path.split("/")[1:]]
        auth = headers.get("Authorization")
        self.requests.append(LoggedRequest(method, unquote(parts.path), query, auth))
        token = auth[len("Bearer ") :] if auth and auth.startswith("Bearer ") else None
        if segments[:1] == ["viewer"] and len(segments) == 2:
            ds = self.datasets.get(query.get("dataset", ""))
            return viewer.handle_viewer(segments[1], query, ds, token, self.url)
        if segments[:2] == ["api", "datasets"]:
            return self._api(segments[2:], query, token, f"{self.url}{parts.path}")
        if segments[:1] == ["datasets"] and len(segments) >= 6 and segments[3] == "resolve":
            ds = self.datasets.get("/".join(segments[1:3]))
            return hub.resolve_reply(ds, segments[4], "/".join(segments[5:]), token)
        return json_reply({"error": "Not Found"}, 404)

    def _api(self, rest: list[str], query: dict[str, str], token: str | None, url: str) -> Reply:
        if not rest or rest == [""]:
            return hub.search_reply(self.datasets, query)
        ds = self.datasets.get("/".join(rest[:2]))
        tail = rest[2:]
        if not tail:
            return hub.info_reply(ds, "main", token)
        if tail[0] == "revision" and len(tail) == 2:
            return hub.info_reply(ds, tail[1], token)
        if tail[0] == "tree" and len(tail) >= 2:
            page = self.tree_page_size
            return hub.tree_reply(ds, tail[1], "/".join(tail[2:]), query, token, url, page)
        return json_reply({"error": "Not Found"}, 404)


def _handler_for(server: HfServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body leave as separate writes

        def _serve(self, with_body: bool) -> None:
            try:
                reply = server.answer(self.command, self.path, self.headers)
            except Exception as exc:  # a bug in the fake must show up as a 500, not a hang
                reply = json_reply({"error": f"fake server bug: {exc!r}"}, 500)
            body = reply.body
            self.send_response(reply.status)
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if with_body:
                self.wfile.write(body)

        def do_GET(self) -> None:
            self._serve(with_body=True)

        def do_HEAD(self) -> None:
            self._serve(with_body=False)

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Handler
