"""Chromium's DevTools endpoint for a harness without network (``network: none``).

Chromium listens on the host's ``127.0.0.1:<port>``; a sandboxed harness has its own network
namespace, where that address is empty. The server forwards a Unix socket in the case
directory to the port (:func:`serve_socket`), and the harness starts under a small relay
(:data:`RELAY_SOURCE`, run by the sandbox's Python) that listens on ``127.0.0.1:<port>`` inside
the namespace and forwards each connection to the socket — so ``BENCHBOOK_CDP_URL`` and the
``webSocketDebuggerUrl`` values Chromium hands out work unchanged, and the browser (whose
egress is enforced, :mod:`.egress`) is the harness's only way out.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

#: ``python -c RELAY_SOURCE <port> <socket> <program> [args…]``: relay, run the program, exit
#: with its status (128+N when killed by signal N).
RELAY_SOURCE = """
import socket, subprocess, sys, threading
port, path, argv = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
server = socket.create_server(("127.0.0.1", port))
def pipe(src, dst):
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
def serve():
    while True:
        conn, _ = server.accept()
        up = socket.socket(socket.AF_UNIX)
        try:
            up.connect(path)
        except OSError:
            conn.close()
            continue
        threading.Thread(target=pipe, args=(conn, up), daemon=True).start()
        threading.Thread(target=pipe, args=(up, conn), daemon=True).start()
threading.Thread(target=serve, daemon=True).start()
try:
    code = subprocess.call(argv)
except OSError as exc:
    print(f"cannot start {argv[0]}: {exc.strerror or exc}", file=sys.stderr)
    code = 127
sys.exit(code if code >= 0 else 128 - code)
"""


def relay_argv(port: int, socket_path: Path, argv: list[str]) -> list[str]:
    """``argv`` wrapped in the relay (this interpreter, bound read-only into the sandbox)."""
    return [sys.executable, "-I", "-S", "-c", RELAY_SOURCE, str(port), str(socket_path), *argv]


async def _forward(port: int, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        writer.close()
        return

    async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            while data := await src.read(65536):
                dst.write(data)
                await dst.drain()
        with contextlib.suppress(OSError):
            dst.close()

    await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))


@asynccontextmanager
async def serve_socket(socket_path: Path, port: int) -> AsyncIterator[Path]:
    """Forward connections on the Unix socket ``socket_path`` to ``127.0.0.1:port`` while the
    block runs; yields the socket path."""
    server = await asyncio.start_unix_server(
        lambda r, w: _forward(port, r, w), path=str(socket_path)
    )
    try:
        yield socket_path
    finally:
        server.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(server.wait_closed(), 2.0)
        socket_path.unlink(missing_ok=True)
