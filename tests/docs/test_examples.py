"""Issue 14 item 13: every shell example in README.md and docs/*.md runs as written.

Each ```` ```bash ````/```` ```sh ````/```` ```console ```` block is either run or carries
``<!-- not run: REASON -->`` on the line before it (Docker, the Hugging Face Hub, a Ray
cluster, a model API, a second machine): :func:`test_blocks_not_run_say_why` lists those with
their reasons, so none is skipped silently.

How a page runs: its blocks in order, in one bash session (a page is a walkthrough), in a fresh
directory laid out like a checkout (``examples``, ``scripts``, ``src``, ``tests``, ``bench`` and
``.venv`` linked from the project, ``../shared/data`` from the shared data), against a fresh demo
server: the steps of ``scripts/demo`` without its ``exec serve``, then ``benchbook serve`` on a
free port. The environment holds what README's "Examples" paragraph says: ``BENCHBOOK_HOME``,
``BENCHBOOK_URL`` and ``BENCHBOOK_API_KEY`` (an admin key of ``admin@localhost``). A block with
``$ `` prompts is a transcript: only the prompted lines (with their ``\\`` continuations and
heredocs) run; a command whose shown output (in a plain block: its ``# …`` comment) starts
with ``error `` must fail. ``curl`` fails on an HTTP error status. A failing command fails the
test naming ``FILE:LINE`` and its output.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from benchbook.services.accounts import bootstrap_admin
from benchbook.store.engine import make_engine

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^(\s*)```(bash|sh|shell|console)\s*$")
NOT_RUN = re.compile(r"<!--\s*not run:\s*(.+?)\s*-->")
HEREDOC = re.compile(r"<<-?\s*['\"]?(\w+)['\"]?")
VENV = Path(sys.executable).parent.parent
KEY_COMMAND = [
    "benchbook",
    "keys",
    "create",
    "--user",
    "admin@localhost",
    "--name",
    "test",
    "--scope",
    "admin",
    "--json",
]

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class Command:
    """One command of a block: its first line in the page, its text, and whether the page
    shows it failing (``error …`` right after it)."""

    line: int
    text: str
    fails: bool = False


@dataclass(frozen=True)
class Block:
    """A shell block: the page, the line of its opening fence, its commands, and the reason
    it is not run (None when it runs)."""

    path: Path
    line: int
    commands: tuple[Command, ...]
    not_run: str | None

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def _commands(lines: list[str], first: int) -> list[Command]:
    """The commands of a block's ``lines`` (``first`` = page line of ``lines[0]``)."""
    transcript = any(x.startswith("$ ") for x in lines)
    out: list[Command] = []
    i = 0
    while i < len(lines):
        raw = lines[i]
        if transcript and not raw.startswith("$ "):
            i += 1
            continue
        text = raw[2:] if transcript else raw
        if not transcript and (not text.strip() or text.lstrip().startswith("#")):
            i += 1
            continue
        start = i
        parts = [text]
        while parts[-1].rstrip().endswith("\\") and i + 1 < len(lines):
            i += 1
            parts.append(lines[i])
        heredoc = HEREDOC.search(text) if "<<" in text else None
        if heredoc:
            end = heredoc.group(1)
            while i + 1 < len(lines):
                i += 1
                parts.append(lines[i])
                if lines[i].strip() == end:
                    break
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        shown = nxt if transcript else parts[0].partition(" #")[2]
        fails = shown.strip().startswith("error ")
        out.append(Command(first + start, "\n".join(parts), fails))
        i += 1
    return out


def blocks(path: Path) -> list[Block]:
    """Every shell block of a page, in order."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        indent = len(fence.group(1))
        j = i + 1
        while j < len(lines) and lines[j].strip() != "```":
            j += 1
        body = [x[indent:] if x[:indent].strip() == "" else x for x in lines[i + 1 : j]]
        before = next((lines[k] for k in range(i - 1, -1, -1) if lines[k].strip()), "")
        reason = NOT_RUN.search(before)
        found.append(
            Block(path, i + 1, tuple(_commands(body, i + 2)), reason.group(1) if reason else None)
        )
        i = j + 1
    return found


ALL_BLOCKS = [b for page in DOCS for b in blocks(page)]
#: The pages with examples to run, the most commands first (the longest first across workers).
PAGES = sorted(
    (p for p in DOCS if any(b.not_run is None for b in blocks(p))),
    key=lambda p: -sum(len(b.commands) for b in blocks(p) if b.not_run is None),
)


def test_blocks_not_run_say_why() -> None:
    """Lists every block that is not run, with its reason (``pytest -rA`` shows the list)."""
    skipped = [b for b in ALL_BLOCKS if b.not_run is not None]
    for b in skipped:
        print(f"not run: {b.where}: {b.not_run}")
    assert all(len(b.not_run or "") >= 10 for b in skipped), "a reason says why"
    assert all(b.commands for b in ALL_BLOCKS if b.not_run is None), "an empty runnable block"


def test_readme_runs_top_to_bottom_on_a_fresh_home() -> None:
    """The session below seeds ``admin@localhost`` and an API key, which a reader's fresh home
    lacks: README itself creates every user a ``--user`` names before it, and exports
    ``BENCHBOOK_API_KEY`` before anything reads it."""
    created: set[str] = set()
    exported = False
    for b in blocks(ROOT / "README.md"):
        if b.not_run is not None:
            continue
        for c in b.commands:
            where = f"README.md:{c.line}: {c.text}"
            for email in re.findall(r"--user\s+(\S+@\S+)", c.text):
                assert email in created, f"{where}: user {email} is not created before"
            if "Client(" in c.text or "$BENCHBOOK_API_KEY" in c.text.replace(
                "export BENCHBOOK_API_KEY=", ""
            ):
                assert exported, f"{where}: BENCHBOOK_API_KEY is not exported before"
            created.update(re.findall(r"users create --email\s+(\S+)", c.text))
            exported = exported or "export BENCHBOOK_API_KEY=" in c.text


# --- the fresh demo server --------------------------------------------------------------------


def _checkout(where: Path, home: Path | None = None) -> Path:
    """A directory laid out like a checkout beside ``shared``; returns the checkout. With
    ``home``, its ``benchbook-data`` is that home (where ``scripts/demo`` keeps the served one)."""
    project = where / "project"
    project.mkdir(parents=True)
    if home is not None:
        (project / "benchbook-data").symlink_to(home)
    for name in ("examples", "scripts", "src", "tests", "bench", "pyproject.toml", "README.md"):
        (project / name).symlink_to(ROOT / name)
    (project / "docs").symlink_to(ROOT / "docs")
    (project / ".venv").symlink_to(VENV)
    (where / "shared").symlink_to(SHARED)
    return project


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BENCHBOOK_", "DATABASE_"))}
    env.update(
        BENCHBOOK_HOME=str(home),
        PATH=f"{VENV / 'bin'}:{env.get('PATH', '/usr/bin:/bin')}",
        PYTHONPATH=f"{ROOT / 'src'}:{ROOT}",
        COLUMNS="100",
    )
    return env


@dataclass(frozen=True)
class Demo:
    """What ``scripts/demo`` makes before it serves, plus an admin API key of
    ``admin@localhost`` (``benchbook keys create``, once: each page's copy of the home holds
    it)."""

    home: Path
    key: str


@pytest.fixture(scope="module")
def demo_home(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    """A BENCHBOOK_HOME holding what ``scripts/demo`` makes before it serves, and its key."""
    where = tmp_path_factory.mktemp("demo")
    project = _checkout(where)
    script = (ROOT / "scripts" / "demo").read_text(encoding="utf-8")
    kept = [
        x
        for x in script.splitlines()
        if "pip install" not in x
        and "-m venv" not in x
        and not x.startswith(("exec ", "echo ", "cd "))
    ]
    home = where / "home"
    env = _env(home)
    done = subprocess.run(
        ["bash", "-c", "\n".join(kept)], cwd=project, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    engine = make_engine(f"sqlite:///{home / 'benchbook.db'}")
    bootstrap_admin(engine)  # what the demo's first `serve` does: admin@localhost
    engine.dispose()
    made = subprocess.run(KEY_COMMAND, env=env, capture_output=True, text=True, check=True)
    key = re.search(r'"key": "([^"]+)"', made.stdout)
    assert key, made.stdout
    return Demo(home, key.group(1))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Session:
    """A fresh page session: its checkout, environment and server process."""

    project: Path
    env: dict[str, str]


#: A page talks to the server when it mentions one of these.
SERVED = ("BENCHBOOK_URL", "curl ", "Client(")


@pytest.fixture
def session(demo_home: Demo, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Session]:
    """A fresh copy of the demo home in a fresh checkout, with its admin key in the
    environment; served on a free port when the page talks HTTP (a start costs seconds, ~50 s
    on a loaded machine)."""
    page: Path = request.getfixturevalue("page")
    home = tmp_path / "home"
    shutil.copytree(demo_home.home, home)
    project = _checkout(tmp_path, home)
    env = _env(home)
    env["BENCHBOOK_API_KEY"] = demo_home.key
    if not any(word in page.read_text(encoding="utf-8") for word in SERVED):
        yield Session(project, env)
        return
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    log = (tmp_path / "serve.log").open("w")
    server = subprocess.Popen(
        [str(VENV / "bin" / "benchbook"), "serve", "--port", str(port)],
        cwd=project,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                if httpx.get(f"{url}/api/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert server.poll() is None and time.monotonic() < deadline, "server did not start"
            time.sleep(0.2)
        env["BENCHBOOK_URL"] = url
        yield Session(project, env)
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


#: ``curl`` in a page fails on an HTTP error (a missing auth header is a 401): the body is
#: still printed.
CURL = 'curl() { command curl --fail-with-body "$@"; }'


def _script(page_blocks: list[Block]) -> str:
    """One bash script running every command, stopping at the first that does not do what
    the page shows (``__BB_FAIL__ LINE`` on fd 3)."""
    out = ["exec 3>&2", CURL, "trap 'kill $(jobs -p) 2>/dev/null' EXIT"]
    for b in page_blocks:
        for c in b.commands:
            want = "-eq 0" if c.fails else "-ne 0"
            out.append(f"echo '+ {b.path.name}:{c.line}' >&2")
            out.append(c.text)
            out.append(f"__rc=$?; if [ $__rc {want} ]; then echo __BB_FAIL__ {c.line} $__rc >&3;")
            out.append("exit 97; fi")
    return "\n".join(out) + "\n"


#: Pages whose examples do not run as written yet, and why: expected to fail (strict, so a page
#: that starts passing must leave this list). Each is work left for issue 14 item 13.
PENDING: dict[str, str] = {}


def _page_param(page: Path) -> object:
    name = str(page.relative_to(ROOT))
    if name in PENDING:
        return pytest.param(
            page, id=name, marks=pytest.mark.xfail(reason=PENDING[name], strict=True)
        )
    return pytest.param(page, id=name)


@pytest.mark.parametrize("page", [_page_param(p) for p in PAGES])
def test_the_shell_examples_of_a_page_run_as_written(page: Path, session: Session) -> None:
    runnable = [b for b in blocks(page) if b.not_run is None]
    start = time.monotonic()
    done = subprocess.run(
        ["bash", "-c", _script(runnable)],
        cwd=session.project,
        env=session.env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    failed = re.search(r"__BB_FAIL__ (\d+) (\d+)", done.stderr)
    if failed:
        line, rc = int(failed.group(1)), int(failed.group(2))
        command = next(c for b in runnable for c in b.commands if c.line == line)
        said = "exited 0 but the page shows an error" if command.fails else f"exit {rc}"
        pytest.fail(
            f"{page.relative_to(ROOT)}:{line}: {said}\n$ {command.text}\n"
            f"--- stdout (end)\n{done.stdout[-3000:]}\n--- stderr (end)\n{done.stderr[-3000:]}"
        )
    assert done.returncode == 0, done.stderr[-3000:]
    print(f"{page.name}: {time.monotonic() - start:.1f} s")
