"""Issue 32: ``benchbook serve`` under many clients — ``--workers N`` processes over one
PostgreSQL (refused on SQLite), and idle connections kept longer than clients keep theirs."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import pytest

from tests.live_server import _free_port, fresh_database, serve

BENCHBOOK = str(Path(sys.executable).parent / "benchbook")
HEALTH = b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


def _env(url: str, home: Path) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": url,
        "BENCHBOOK_HOME": str(home),
        "BENCHBOOK_SECRET_KEY": "serve-tests-" + uuid.uuid4().hex,
    }


def _ask(sock: socket.socket) -> bytes:
    """Send a health request on ``sock``; the whole response ("" when the server had closed)."""
    sock.sendall(HEALTH)
    got = b""
    while b"\r\n\r\n" not in got or not got.endswith(b"}"):
        chunk = sock.recv(65536)
        if not chunk:
            break
        got += chunk
    return got


def _children(pid: int) -> list[int]:
    """The uvicorn worker processes of ``pid`` (multiprocessing's resource tracker left out)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            cmdline = (entry / "cmdline").read_bytes()
        except (OSError, ValueError):
            continue
        if int(stat[1]) == pid and stat[0] != "Z" and b"resource_tracker" not in cmdline:
            found.append(int(entry.name))
    return found


def _owner(server_port: int, client_port: int, pids: list[int]) -> int | None:
    """Which of ``pids`` holds the server side of the connection from ``client_port``."""
    inodes = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, remote = fields[1], fields[2]
        if int(local.split(":")[1], 16) == server_port and int(remote.split(":")[1], 16) == (
            client_port
        ):
            inodes.add(f"socket:[{fields[9]}]")
    for pid in pids:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                if os.readlink(fd) in inodes:
                    return pid
            except OSError:
                continue
    return None


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_two_workers_on_postgresql_both_answer_and_stop_with_the_parent(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    with fresh_database("postgresql", tmp_path_factory) as url:
        port = _free_port()
        log = (tmp_path / "serve.log").open("w")
        cmd = [BENCHBOOK, "serve", "--port", str(port), "--workers", "2"]
        proc = subprocess.Popen(cmd, env=_env(url, tmp_path), stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 180  # two app builds on a loaded 2-core machine
            while proc.poll() is None and time.monotonic() < deadline:
                try:
                    if httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=2).is_success:
                        break
                except httpx.HTTPError:
                    time.sleep(0.2)
            assert proc.poll() is None, (tmp_path / "serve.log").read_text()
            children = _children(proc.pid)
            assert len(children) == 2, children
            answered: set[int] = set()
            for _ in range(400):  # new connections until each process has answered one
                with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
                    assert b" 200 OK" in _ask(sock)
                    owner = _owner(port, sock.getsockname()[1], children)
                    assert owner is not None
                    answered.add(owner)
                if answered == set(children):
                    break
            assert answered == set(children)
        finally:
            proc.terminate()
            proc.wait(timeout=60)
            log.close()
        deadline = time.monotonic() + 30
        while any(_alive(p) for p in children) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [p for p in children if _alive(p)]


def test_workers_on_sqlite_are_refused_naming_why(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'b.db'}"
    done = subprocess.run(
        [BENCHBOOK, "serve", "--workers", "2", "--port", str(_free_port())],
        env=_env(url, tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    out = " ".join((done.stdout + done.stderr).split())
    assert "error invalid_input: --workers 2: several server processes need PostgreSQL" in out
    assert "SQLite has one writer" in out


def test_an_idle_connection_outlives_the_clients_own_expiry(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """httpx and requests keep an idle connection 5 s; uvicorn closed its side after 5 s too,
    so a request sent at that moment met a closing connection ("server disconnected"). The
    server must keep it longer: after 6 s idle the same connection still answers."""
    with (
        fresh_database("sqlite", tmp_path_factory) as url,
        serve(("sqlite", url), tmp_path) as server,
    ):
        port = int(server.url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            assert b" 200 OK" in _ask(sock)
            time.sleep(6)
            assert b" 200 OK" in _ask(sock)


def test_a_port_in_use_is_refused_before_the_first_admin_is_created(tmp_path: Path) -> None:
    """``serve`` on a busy port printed the first admin's "shown once" password, then failed
    with uvicorn's ``address already in use``: the password was spent on a server that never
    ran. Now the port is checked first and nothing is created."""
    home = tmp_path / "home"
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        env = _env(f"sqlite:///{tmp_path / 'b.db'}", home)
        done = subprocess.run(
            [BENCHBOOK, "serve", "--port", str(port)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 1, done.stdout + done.stderr
    said = " ".join((done.stdout + done.stderr).split())
    assert f"cannot serve on 127.0.0.1:{port}: Address already in use" in said
    assert "--port or BENCHBOOK_PORT" in said
    assert "password" not in said
    users = subprocess.run(
        [BENCHBOOK, "users", "list", "--json"], env=env, capture_output=True, text=True
    )
    assert users.returncode == 0, users.stderr
    assert "admin@localhost" not in users.stdout
