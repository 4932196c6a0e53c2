"""The server's own git (outside the sandbox) fetches a ``repo`` case's repository only from a
public host, a host the installation lists, or a mirror already in the cache (the finding: a
member's case with ``"git": "http://127.0.0.1:8732/api/health"`` made the server request
``/api/health/info/refs?service=git-upload-pack``). Each test serves real HTTP on loopback and
asserts what reached it."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from benchbook.contracts.dataset import RepoEnv
from benchbook.contracts.harness import CommandHarness
from benchbook.contracts.run import CaseInput
from benchbook.runtime import RuntimeConfig
from benchbook.runtime.environments.git_egress import (
    GitEgressError,
    git_network_config,
    static_problem,
)
from benchbook.runtime.environments.mirrors import seed_mirror
from tests.runtime.gitserver import GitServer, make_bare_repo, serve_git
from tests.runtime.runner import RunCase

HARNESS = CommandHarness.model_validate(
    {"id": "h", "version": "1.0.0", "config": {"argv": ["cat", "README.md"]}}
)


def _case(url: str, ref: str = "main") -> CaseInput:
    env = RepoEnv.model_validate({"source": {"git": url, "ref": ref}})
    return CaseInput(case_id="c1", env=env, task="t", timeout_s=60)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[GitServer, str]]:
    bare, commit = make_bare_repo(tmp_path / "remote", {"README.md": "hello\n"})
    with serve_git(bare) as server:
        yield server, commit


@pytest.fixture
def redirector() -> Iterator[tuple[int, list[str], list[str]]]:
    """A loopback server answering 302 to ``target[0]`` + the path; ``(port, seen, target)``."""
    seen: list[str] = []
    target: list[str] = [""]

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.path)
            self.send_response(302)
            self.send_header("Location", target[0] + self.path)
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1], seen, target
    finally:
        server.shutdown()
        server.server_close()


def test_a_loopback_git_host_is_refused_before_anything_is_fetched(
    run_case: RunCase, served: tuple[GitServer, str]
) -> None:
    server, _ = served
    result = run_case(HARNESS, _case(server.url))
    assert result.status == "error"
    assert result.error is not None
    assert "git host 127.0.0.1 is loopback: only public hosts or registered mirrors" in result.error
    assert server.url in result.error
    assert server.requests == []


def test_a_name_resolving_to_loopback_is_refused(
    run_case: RunCase, served: tuple[GitServer, str]
) -> None:
    server, _ = served
    named = server.url.replace("127.0.0.1", "localhost")
    result = run_case(HARNESS, _case(named))
    assert result.status == "error" and result.error is not None
    assert "git host localhost is loopback" in result.error
    assert server.requests == []
    # At the network step the name is resolved and every address checked (a listed name too:
    # listing permits an IP literal only).
    port = named.split(":")[2].split("/")[0]
    with pytest.raises(GitEgressError, match=r"git host localhost resolves to 127\.0\.0\.1"):
        asyncio.run(git_network_config(named, (f"localhost:{port}",)))


def test_a_listed_address_is_fetched_pinned_and_without_redirects(
    run_case: RunCase, runtime_config: RuntimeConfig, served: tuple[GitServer, str]
) -> None:
    server, _ = served
    port = server.url.split(":")[2].split("/")[0]
    config = replace(runtime_config, git_allowed_hosts=(f"127.0.0.1:{port}",))
    result = run_case(HARNESS, _case(server.url), config=config)
    assert (result.status, result.trace.answer) == ("ok", "hello"), result.error
    assert any("info/refs" in r for r in server.requests)
    other = server.url.replace(f":{port}/", f":{int(port) + 1}/")
    assert static_problem(other, config.git_allowed_hosts) is not None  # another port


def test_a_redirect_from_a_listed_host_to_another_host_is_not_followed(
    run_case: RunCase,
    runtime_config: RuntimeConfig,
    served: tuple[GitServer, str],
    redirector: tuple[int, list[str], list[str]],
) -> None:
    server, _ = served
    port, seen, target = redirector
    target[0] = server.url.removesuffix("/acme/widget.git")
    config = replace(runtime_config, git_allowed_hosts=(f"127.0.0.1:{port}",))
    result = run_case(HARNESS, _case(f"http://127.0.0.1:{port}/acme/widget.git"), config=config)
    assert result.status == "error" and result.error is not None
    assert "git clone" in result.error
    assert seen and server.requests == [], "the redirect target was requested"


def test_a_seeded_mirror_of_a_loopback_host_is_read_without_network_but_never_fetched(
    run_case: RunCase, runtime_config: RuntimeConfig, served: tuple[GitServer, str]
) -> None:
    server, commit = served
    host = server.url.split("/")[2]
    asyncio.run(seed_mirror(runtime_config.mirrors, "acme/widget", server.bare, host=host))
    ok = run_case(HARNESS, _case(server.url.replace("http://", "https://"), commit))
    assert (ok.status, ok.trace.answer) == ("ok", "hello"), ok.error
    missing = run_case(HARNESS, _case(server.url.replace("http://", "https://"), "v9"))
    assert missing.status == "error" and missing.error is not None
    assert "git host 127.0.0.1 is loopback" in missing.error
    assert server.requests == []


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://10.1.2.3/a/b.git", "private"),
        ("http://169.254.169.254/latest/meta", "link-local"),
        ("http://0.0.0.0/a/b", "is private"),
        ("http://app.localhost/a/b", "loopback"),
        ("file:///etc/a/b", "not an http(s) URL"),
        ("ext::sh -c id/a/b", "not an http(s) URL"),
        ("ssh://-oProxyCommand=id/a/b", "not an http(s) URL"),
        ("/srv/repos/a.git", "not an http(s) URL"),
    ],
)
def test_what_is_refused_from_the_url_alone(url: str, why: str) -> None:
    problem = static_problem(url, ())
    assert problem is not None and why in problem
    assert static_problem("https://github.com/acme/widget.git", ()) is None
    assert static_problem("http://10.1.2.3/a/b.git", ("10.1.2.3",)) is None


@pytest.mark.parametrize("host", ["127.1", "2130706433", "0x7f.1", "0177.0.0.1"])
def test_legacy_ipv4_spellings_of_loopback_are_loopback(host: str) -> None:
    problem = static_problem(f"http://{host}:8732/api/health", ())
    assert problem is not None and f"git host {host} is loopback" in problem
