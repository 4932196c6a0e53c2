"""A local bare git repository served over real HTTP (git's dumb protocol) for the repo tests."""

from __future__ import annotations

import functools
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

GIT_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": "/nonexistent",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@localhost",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@localhost",
}


def git(cwd: Path, *args: str) -> str:
    """Run git in ``cwd`` with a fixed environment; its stdout."""
    done = subprocess.run(
        ["git", "-c", "init.defaultBranch=main", *args],
        cwd=cwd,
        env=GIT_ENV,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


@dataclass
class GitServer:
    """``url`` of the served repository; ``requests`` the paths requested so far."""

    url: str
    bare: Path
    requests: list[str] = field(default_factory=list)


def make_bare_repo(root: Path, files: dict[str, str]) -> tuple[Path, str]:
    """A bare repository at ``root/acme/widget.git`` with one commit of ``files``; its SHA."""
    source = root / "source"
    source.mkdir(parents=True)
    git(source, "init", "-q")
    for name, text in files.items():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        (source / name).write_text(text)
    git(source, "add", "-A")
    git(source, "commit", "-q", "-m", "initial")
    commit = git(source, "rev-parse", "HEAD")
    bare = root / "served" / "acme" / "widget.git"
    bare.parent.mkdir(parents=True)
    git(root, "clone", "-q", "--bare", str(source), str(bare))
    git(bare, "update-server-info")  # the dumb HTTP protocol reads info/refs
    return bare, commit


@contextmanager
def serve_git(bare: Path) -> Iterator[GitServer]:
    """Serve the directory above ``acme/`` on a free 127.0.0.1 port."""
    served_root = bare.parent.parent
    requests: list[str] = []

    class Handler(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            requests.append(self.path)

    handler = functools.partial(Handler, directory=str(served_root))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/acme/widget.git"
        yield GitServer(url=url, bare=bare, requests=requests)
    finally:
        server.shutdown()
        server.server_close()
