"""What a hostile case process tries, as a script run inside the sandbox (issue 27).

``python -c PROBE <server pid> <home> <port> <outside file>`` prints one JSON object: for each
attempt ``["ok", what it got]`` or ``["refused", exception name]``, the value of the server's
marker variable, and the pids it can see.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

MARKER_VAR = "BENCHBOOK_SANDBOX_TEST_MARKER"
MARKER_VALUE = "server-only-6c1e"

PROBE = r"""
import json, os, socket, sys
server_pid, home, port, outside = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
found = {}
def attempt(name, fn):
    try:
        found[name] = ["ok", repr(fn())[:200]]
    except Exception as exc:
        found[name] = ["refused", type(exc).__name__]
attempt("database", lambda: open(os.path.join(home, "benchbook.db"), "rb").read(16))
attempt("secret_key", lambda: open(os.path.join(home, "secret.key")).read())
attempt("server_environ", lambda: open(f"/proc/{server_pid}/environ", "rb").read(64))
attempt("connect", lambda: socket.create_connection(("127.0.0.1", port), timeout=3).close())
attempt("write_outside", lambda: open(outside, "w").write("x"))
attempt("write_usr", lambda: open("/usr/benchbook-probe", "w").write("x"))
attempt("write_workdir", lambda: open("probe-wrote-this", "w").write("x"))
found["marker"] = os.environ.get("BENCHBOOK_SANDBOX_TEST_MARKER")
found["pids"] = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
print(json.dumps(found))
"""


@contextmanager
def tcp_server() -> Iterator[int]:
    """A TCP server on 127.0.0.1 (the host's network) that accepts and closes; its port."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
                conn.close()
            except OSError:
                continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield int(server.getsockname()[1])
    finally:
        stop.set()
        thread.join()
        server.close()
