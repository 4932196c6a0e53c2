"""The ``browser`` environment (SPEC H.3): a headless Chromium per case.

Chromium (``RuntimeConfig.chromium``) starts in the case's sandbox (:mod:`..sandbox`: only the
case directory writable, with its private profile; ``--no-sandbox`` inside, since bwrap is the
sandox) with the host's network, restricted by the installation's browser allowed hosts
(:mod:`.egress`: checked after DNS resolution, pinned with ``--host-resolver-rules``, every
other host ``~NOTFOUND``). A start URL that is not allowed is an environment error naming the
host and why, and no browser starts. ``--remote-debugging-port=0``: the port it picks is read
from the ``DevTools listening on ws://…`` line it prints on stderr, and
``http://127.0.0.1:<port>`` is handed to the harness as ``BENCHBOOK_CDP_URL`` (Playwright's
``connect_over_cdp`` accepts it; a harness without network reaches it through
:mod:`.cdp_relay`). The start URL, if any, is the first tab. The snapshot holds the URL of the
most recently active page (``/json/list``) and a PNG screenshot of it (CDP
``Page.captureScreenshot``, base64). The whole sandbox is killed on exit.

The DevTools websocket is spoken with the few lines of RFC 6455 a single request needs, so the
runtime needs no websocket library.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import struct
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from benchbook.contracts.dataset import BrowserEnv
from benchbook.contracts.run import CaseInput, EnvSnapshot
from benchbook.runtime.config import RuntimeConfig
from benchbook.runtime.environments.cdp_relay import serve_socket
from benchbook.runtime.environments.egress import (
    EgressError,
    check_url,
    resolve_allowed,
    resolver_rules,
)
from benchbook.runtime.environments.workspace import Workspace
from benchbook.runtime.sandbox import SandboxedProcess, SandboxError, SandboxLimits, start_sandboxed
from benchbook.runtime.spawner import Process

#: Seconds Chromium may take to print its DevTools endpoint.
STARTUP_TIMEOUT_S = 30.0
#: Seconds the end-of-case URL and screenshot requests may take together.
SNAPSHOT_TIMEOUT_S = 20.0

_LISTENING = re.compile(rb"DevTools listening on ws://[^:/]+:(\d+)/")


@asynccontextmanager
async def open_browser(
    case_input: CaseInput, config: RuntimeConfig, case_root: Path, workdir: Path
) -> AsyncIterator[Workspace]:
    """Start Chromium for one case; yield its workspace; kill it on exit.

    Yields a workspace with ``error`` set (and no browser left running) when Chromium cannot be
    started or prints no DevTools endpoint within :data:`STARTUP_TIMEOUT_S`.
    """
    env = case_input.env
    assert isinstance(env, BrowserEnv)
    start_url = env.start_url or "about:blank"
    try:
        allowed, notes = await resolve_allowed(config.browser_allowed_hosts)
        check_url(start_url, allowed, notes)
    except EgressError as exc:
        yield Workspace(workdir=workdir, kind="browser", error=f"browser egress: {exc}")
        return
    profile = case_root / "chromium-profile"
    profile.mkdir()
    stderr_path = case_root / "chromium.stderr"
    argv = [config.chromium, *_flags(profile, resolver_rules(allowed)), start_url]
    proc: SandboxedProcess | None = None
    port: int | None = None
    problem = ""
    try:
        # stderr goes to a file: a pipe nobody drains would eventually block the browser.
        with stderr_path.open("wb") as stderr_file:
            proc = await start_sandboxed(
                argv,
                policy=config.sandbox,
                cwd=case_root,
                env={"PATH": os.environ.get("PATH", os.defpath), "HOME": str(case_root)},
                writable=[case_root],
                network="full",  # to the allowed hosts only: the resolver rules above
                limits=_browser_limits(config),
                stdout=asyncio.subprocess.DEVNULL,
                stderr=stderr_file.fileno(),
            )
        port = await _wait_for_port(proc.process, stderr_path)
    except (OSError, RuntimeError, SandboxError) as exc:
        problem = f"browser did not start: {exc}"
    except BaseException:  # cancelled while starting: leave no browser behind
        if proc is not None:
            await proc.kill()
        raise
    if proc is None or port is None:
        if proc is not None:
            await proc.kill()
        yield Workspace(workdir=workdir, kind="browser", error=problem)
        return
    cdp_url = f"http://127.0.0.1:{port}"

    async def snapshot() -> EnvSnapshot:
        return await asyncio.wait_for(_snapshot(cdp_url), SNAPSHOT_TIMEOUT_S)

    relay_dir = case_root / "cdp"
    try:
        relay_dir.mkdir()
        async with serve_socket(relay_dir / "cdp.sock", port) as socket_path:
            yield Workspace(
                workdir=workdir,
                kind="browser",
                env_vars={"BENCHBOOK_CDP_URL": cdp_url},
                snapshot_fn=snapshot,
                cdp_relay=(port, socket_path),
            )
    finally:
        await proc.kill()


def _flags(profile: Path, rules: str) -> list[str]:
    """Chromium's flags: headless, its own profile, DevTools on loopback, egress rules, and
    no background traffic of its own (updates, sync, pings, WebRTC UDP around the rules)."""
    return [
        "--headless=new",
        "--no-sandbox",  # the case's bwrap sandbox is the sandbox
        "--remote-debugging-port=0",
        "--remote-debugging-address=127.0.0.1",
        f"--user-data-dir={profile}",
        f"--host-resolver-rules={rules}",
        "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-pings",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-gpu",
        "--disable-dev-shm-usage",
    ]


def _browser_limits(config: RuntimeConfig) -> SandboxLimits:
    """The installation's limits without address space and process caps: Chromium reserves
    tens of GB of virtual memory and runs a hundred threads."""
    return replace(config.sandbox.limits, address_space_bytes=None, processes=None)


async def _wait_for_port(proc: Process, stderr_path: Path) -> int:
    """The DevTools port from Chromium's stderr.

    Raises:
        RuntimeError: Chromium exited or printed no endpoint in time (with its stderr tail).
    """
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        data = stderr_path.read_bytes()
        match = _LISTENING.search(data)
        if match:
            return int(match.group(1))
        if proc.returncode is not None:
            detail = data[-500:].decode("utf-8", "replace").strip()
            raise RuntimeError(f"exit code {proc.returncode}: {detail}")
        await asyncio.sleep(0.05)
    raise RuntimeError(f"no DevTools endpoint after {STARTUP_TIMEOUT_S:g} s")


async def _snapshot(cdp_url: str) -> EnvSnapshot:
    async with httpx.AsyncClient(timeout=10.0) as client:
        response = await client.get(f"{cdp_url}/json/list")
        response.raise_for_status()
        targets = [t for t in response.json() if t.get("type") == "page"]
    if not targets:
        return EnvSnapshot()
    page = targets[0]  # /json/list puts the most recently active target first
    result = await cdp_call(
        page["webSocketDebuggerUrl"], "Page.captureScreenshot", {"format": "png"}
    )
    shot = result.get("data")
    return EnvSnapshot(url=page.get("url"), screenshot=shot if isinstance(shot, str) else None)


async def cdp_call(ws_url: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """Send one CDP command over the target's websocket; its ``result`` object.

    Raises:
        RuntimeError: the handshake failed, the connection closed, or CDP answered an error.
    """
    parts = urlsplit(ws_url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    reader, writer = await asyncio.open_connection(host, port, limit=2**26)
    try:
        key = base64.b64encode(os.urandom(16)).decode()
        writer.write(
            (
                f"GET {parts.path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                "Sec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        head = await reader.readuntil(b"\r\n\r\n")
        if b" 101 " not in head.split(b"\r\n", 1)[0]:
            raise RuntimeError(f"websocket handshake refused: {head[:200]!r}")
        writer.write(_frame(json.dumps({"id": 1, "method": method, "params": params}).encode()))
        await writer.drain()
        while True:
            message = json.loads(await _read_message(reader))
            if message.get("id") == 1:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result = message.get("result", {})
                return result if isinstance(result, dict) else {}
    finally:
        writer.close()


def _frame(payload: bytes) -> bytes:
    """One masked text frame (clients must mask, RFC 6455 §5.3)."""
    mask = os.urandom(4)
    size = len(payload)
    if size < 126:
        header = struct.pack("!BB", 0x81, 0x80 | size)
    elif size < 2**16:
        header = struct.pack("!BBH", 0x81, 0x80 | 126, size)
    else:
        header = struct.pack("!BBQ", 0x81, 0x80 | 127, size)
    return header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


async def _read_message(reader: asyncio.StreamReader) -> bytes:
    """One whole (possibly fragmented) data message; control frames are skipped."""
    chunks: list[bytes] = []
    while True:
        first, second = await reader.readexactly(2)
        size = second & 0x7F
        if size == 126:
            (size,) = struct.unpack("!H", await reader.readexactly(2))
        elif size == 127:
            (size,) = struct.unpack("!Q", await reader.readexactly(8))
        mask = await reader.readexactly(4) if second & 0x80 else b""
        payload = await reader.readexactly(size)
        if mask:
            payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        opcode = first & 0x0F
        if opcode == 0x8:
            raise RuntimeError("websocket closed by the browser")
        if opcode in (0x9, 0xA):  # ping/pong: nothing to answer for a one-shot request
            continue
        chunks.append(payload)
        if first & 0x80:
            return b"".join(chunks)
