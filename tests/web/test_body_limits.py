"""Body limits on the dashboard's form routes, as on ``/api``: a declared length over the limit
is refused before the body is read, and an unauthenticated post is refused unread, on a real
uvicorn server (raw sockets, so nothing is sent that the server did not ask for)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from sqlalchemy import Engine

from benchbook.services import accounts
from benchbook.services.context import Context
from benchbook.settings import Settings
from tests.mcp.live import live_server


@pytest.fixture
def server_url(engine: Engine, settings: Settings) -> Iterator[str]:
    """A running server (local admin mode until a test creates a user)."""
    with live_server(settings, engine) as url:
        yield url


def _post_head(url: str, path: str, length: int, sent: bytes = b"", cookie: str = "") -> str:
    """Send a POST declaring ``length`` body bytes but only ``sent`` of them; the status line
    and headers of the answer (the server must answer without the rest)."""
    host = urlsplit(url).netloc
    extra = f"Cookie: {cookie}\r\n" if cookie else ""
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {host}\r\nOrigin: {url}\r\n{extra}"
        "Content-Type: application/x-www-form-urlencoded\r\n"
        f"Content-Length: {length}\r\n\r\n"
    ).encode()
    hostname, port = host.split(":")
    with socket.create_connection((hostname, int(port)), timeout=10) as sock:
        sock.sendall(head + sent)
        answer = b""
        while b"\r\n\r\n" not in answer:
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
    return answer.decode("latin-1")


GIB = 1 << 30


@pytest.mark.parametrize("path", ["/datasets/x/comments", "/login", "/members"])
def test_a_form_post_declaring_a_gibibyte_is_413_before_reading(server_url: str, path: str) -> None:
    answer = _post_head(server_url, path, GIB, b"body=x")
    assert answer.startswith("HTTP/1.1 413"), answer[:200]
    assert "text/html" in answer


def test_an_unauthenticated_form_post_is_refused_without_reading_its_body(
    server_url: str, ctx: Context
) -> None:
    accounts.create_user(ctx, "mia@example.org", "Mia", "correct-horse-battery")
    answer = _post_head(server_url, "/datasets/x/comments", 512 * 1024, b"body=x")
    assert answer.split(" ")[1] in ("303", "401", "403"), answer[:200]
    expired = _post_head(
        server_url, "/datasets/x/comments", 512 * 1024, b"body=x", "benchbook_session=bbs_nope"
    )
    assert expired.split(" ")[1] in ("303", "401", "403"), expired[:200]


def test_the_wizards_upload_refuses_a_file_past_max_upload_files_while_streaming(
    engine: Engine, settings: Settings
) -> None:
    boundary = "bbfiles"
    parts = b"".join(
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="t/{i}.json"\r\n'
        f'Content-Type: application/json\r\n\r\n{{"id": "{i}"}}\r\n'.encode()
        for i in range(4)
    )
    with live_server(settings.model_copy(update={"max_upload_files": 3}), engine) as url:
        host = urlsplit(url).netloc
        head = (
            f"POST /import/uploads HTTP/1.1\r\nHost: {host}\r\nOrigin: {url}\r\n"
            f"Content-Type: multipart/form-data; boundary={boundary}\r\n"
            f"Content-Length: {len(parts) + 8 * 1024 * 1024}\r\n\r\n"  # 8 MiB never sent
        ).encode()
        hostname, port = host.split(":")
        with socket.create_connection((hostname, int(port)), timeout=10) as sock:
            sock.sendall(head + parts)
            answer = ""
            while "BENCHBOOK_MAX_UPLOAD_FILES" not in answer and (chunk := sock.recv(65536)):
                answer += chunk.decode("latin-1")
    assert answer.startswith("HTTP/1.1 413"), answer[:300]
    assert "more than 3 files" in answer and "BENCHBOOK_MAX_UPLOAD_FILES" in answer
