"""Who may run what (issue 27 items 2 and 3): the checks a run's plan and cases pass before
anything executes, and the resolution of registered names when a case runs.

Code comes from three places, and only what an admin wrote runs:

- **A run plan** (``start_run``'s ``graders``): an inline ``command``/``tests-pass`` command
  (``config.cmd``/``config.argv``) runs only when the run's starter is an admin
  (``graders:write``); a member names a registered grader, ``config.grader = "id@version"``.
- **A case** (its ``graders``, ``metadata.test_cmd`` read by ``tests-pass``, ``env.setup``): an
  inline command runs only when the dataset version was written by an admin — registered or
  imported by an admin of its workspace, an installation admin or the local CLI, or published
  in ``_shared``; otherwise a case names a registered grader or environment recipe
  (``env.setup = "id@version"``, whose ``test_cmd`` ``tests-pass`` then runs).
- **Model endpoints**: a judge's or an ``openai`` harness's ``base_url`` must be under an
  endpoint an admin registered (:mod:`benchbook.services.endpoints`), and the secret sent with
  it must be bound to that URL's host (:mod:`benchbook.runtime.egress`).

Each refusal is Forbidden (403) naming the field: ``graders[1].command``,
``cases[3].metadata.test_cmd``, ``cases[0].env.setup``, ``graders[0].config.base_url``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import JsonValue
from sqlalchemy import Connection

from benchbook.contracts.dataset import Case, GitSource, GraderSpec, PathSource, RepoEnv
from benchbook.contracts.harness import (
    AgentHarness,
    AnyHarness,
    CommandHarness,
    Harness,
    OpenAIHarness,
)
from benchbook.contracts.registered import EnvironmentRecipe, RegisteredGrader
from benchbook.errors import Conflict, Forbidden, InvalidInput
from benchbook.runtime.egress import host_of, refusal
from benchbook.runtime.environments.git_egress import static_problem
from benchbook.runtime.environments.repo import RepoError, mirror_path
from benchbook.runtime.harnesses.command import argv_file_refusal, unshown_argv_files
from benchbook.runtime.sandbox import SandboxPolicy
from benchbook.services import registered
from benchbook.services.context import LOCAL_ADMIN, Context
from benchbook.services.endpoints import check_base_url, registered_urls
from benchbook.services.environments import ENVIRONMENT
from benchbook.services.graders import GRADER
from benchbook.services.runtime_settings import runtime_config
from benchbook.services.secrets import secret_records_for
from benchbook.store import accounts as accounts_repo
from benchbook.store.datasets import VersionRow
from benchbook.store.harnesses import HarnessRow
from benchbook.store.tables import SHARED_WORKSPACE

CODE_GRADERS = ("command", "tests-pass")
DEFAULT_CMD_FIELD = "test_cmd"


def by_installation_admin(conn: Connection, workspace: str, created_by: str) -> bool:
    """Whether an installation admin wrote a stored version: published in ``_shared``
    (installation admins only), by the local CLI, or by a user flagged installation admin now
    (a demoted author's code is trusted no more)."""
    if workspace == SHARED_WORKSPACE or created_by == LOCAL_ADMIN:
        return True
    user = accounts_repo.find_user(conn, created_by)
    return user is not None and user.installation_admin


def written_by_admin(conn: Connection, version: VersionRow) -> bool:
    """Whether an admin wrote this dataset version: an installation admin
    (:func:`by_installation_admin`), or an admin of its workspace (the role the author holds
    now: a demoted author's data is trusted no more)."""
    if by_installation_admin(conn, version.workspace, version.created_by):
        return True
    member = accounts_repo.find_member(conn, version.workspace, version.created_by)
    return member is not None and member.role == "admin"


def _inline(config: dict[str, JsonValue]) -> bool:
    return config.get("cmd") is not None or config.get("argv") is not None


@dataclass
class CodeCheck:
    """The plan-time checks of one run (module docstring). ``executes`` is False for a
    reported run: its workspace graders never run, so only the endpoint rules apply."""

    ctx: Context
    conn: Connection
    version: VersionRow | None
    executes: bool = True
    _data_trusted: bool | None = None
    _urls: list[str] | None = None
    _hosts: dict[str, list[str] | None] = field(default_factory=dict)

    @property
    def plan_trusted(self) -> bool:
        """The run's starter may write inline commands (admins)."""
        return self.ctx.allows("graders:write")

    @property
    def data_trusted(self) -> bool:
        """The dataset version was written by an admin (:func:`written_by_admin`)."""
        if self._data_trusted is None:
            self._data_trusted = self.version is not None and written_by_admin(
                self.conn, self.version
            )
        return self._data_trusted

    def plan(self, specs: list[GraderSpec]) -> None:
        """Check a run plan's graders (paths ``graders[i]…``). Raises Forbidden, NotFound."""
        for i, spec in enumerate(specs):
            self.grader(spec, f"graders[{i}]", trusted=self.plan_trusted)

    def case(self, position: int, case: Case, plan: list[GraderSpec]) -> None:
        """Check one case's code: its own graders (when the plan has none), the test command
        ``tests-pass`` would read from it, and its ``env.setup``."""
        base = f"cases[{position}]"
        if self.executes:
            self._source(case, base)
        recipe = self._setup(case, base)
        specs = plan or case.graders
        if not plan:
            for j, spec in enumerate(case.graders):
                self.grader(spec, f"{base}.graders[{j}]", trusted=self.data_trusted)
        if not self.executes:
            return
        for spec in specs:
            if spec.id == "tests-pass" and not _inline(spec.config) and "grader" not in spec.config:
                self._test_cmd(case, spec, base, recipe)

    def _source(self, case: Case, base: str) -> None:
        """A repo case's source: a git host the server's git may not reach (decided from the
        URL alone; DNS is checked when the case runs) is 409 unless its mirror is in the cache;
        a local ``path`` only from an admin's dataset."""
        env = case.env
        if not isinstance(env, RepoEnv):
            return
        source = env.source
        if isinstance(source, PathSource) and not self.data_trusted:
            raise Forbidden(
                f"{base}.env.source.path: case {case.id!r} names a path on the server, and this"
                " dataset version was not written by an admin; give a git URL or files",
                {"path": f"{base}.env.source.path", "case_id": case.id},
            )
        if not isinstance(source, GitSource):
            return
        problem = static_problem(source.git, tuple(self.ctx.settings.git_allowed_hosts))
        if problem is None:
            return
        try:
            mirrors = runtime_config(self.ctx.settings).mirrors
            if (mirror_path(mirrors, source.git) / "HEAD").is_file():
                return  # a registered (seeded) mirror: read without network
        except RepoError:
            pass
        raise Conflict(
            f"{base}.env.source.git: case {case.id!r}: {source.git[:200]}: {problem}",
            {"path": f"{base}.env.source.git", "case_id": case.id, "url": source.git[:200]},
        )

    def _setup(self, case: Case, base: str) -> EnvironmentRecipe | None:
        env = case.env
        if not isinstance(env, RepoEnv):
            return None
        if isinstance(env.setup, str):
            item_id, ref = registered.split_ref(env.setup, f"{base}.env.setup")
            row = registered.resolve(self.conn, ENVIRONMENT, self.ctx.workspace, item_id, ref)
            return registered.load(ENVIRONMENT, row)
        if env.setup and self.executes and not self.data_trusted:
            raise Forbidden(
                f"{base}.env.setup: case {case.id!r} carries setup commands, and this dataset"
                " version was not written by an admin; name a registered environment recipe"
                ' ("env": {"setup": "id@version"}) — admins register one with'
                " `benchbook environments register`",
                {"path": f"{base}.env.setup", "case_id": case.id},
            )
        return None

    def _test_cmd(
        self, case: Case, spec: GraderSpec, base: str, recipe: EnvironmentRecipe | None
    ) -> None:
        if recipe is not None and recipe.test_cmd is not None:
            return
        name = spec.config.get("cmd_field", DEFAULT_CMD_FIELD)
        if isinstance(name, str) and name in case.metadata and not self.data_trusted:
            raise Forbidden(
                f"{base}.metadata.{name}: tests-pass would run case {case.id!r}'s own test"
                " command, and this dataset version was not written by an admin; name a"
                " registered grader (config.grader) or an environment recipe with a test_cmd",
                {"path": f"{base}.metadata.{name}", "case_id": case.id},
            )

    def grader(self, spec: GraderSpec, path: str, trusted: bool) -> None:
        """One grader spec: inline commands, registered names, judge endpoints."""
        if spec.id in CODE_GRADERS:
            ref = spec.config.get("grader")
            if ref is not None:
                if _inline(spec.config) or not isinstance(ref, str):
                    raise InvalidInput(
                        f"{path}.config.grader: name a registered grader ('id@version') and"
                        " give no cmd/argv of your own",
                        {"errors": [{"path": f"{path}.config.grader", "message": "bad"}]},
                    )
                item_id, version = registered.split_ref(ref, f"{path}.config.grader")
                registered.resolve(self.conn, GRADER, self.ctx.workspace, item_id, version)
            elif _inline(spec.config) and self.executes and not trusted:
                raise Forbidden(
                    f"{path}.command: an inline command runs only when an admin wrote it; name"
                    ' a registered grader instead ({"id": "'
                    + spec.id
                    + '", "config": {"grader": "id@version"}}) — admins register one with'
                    " `benchbook graders register`",
                    {"path": f"{path}.command", "grader": spec.id},
                )
        elif spec.id == "judge":
            self.endpoint(spec.config.get("base_url"), spec.config.get("api_key_secret"), path)

    def endpoint(self, base_url: Any, secret: Any, path: str) -> None:
        """A model call's URL must be registered and its secret bound to the URL's host."""
        if not isinstance(base_url, str) or not base_url:
            return  # a judge without an endpoint is skipped, never called
        if self._urls is None:
            self._urls = registered_urls(self.conn, self.ctx.workspace)
        check_base_url(self._urls, base_url, f"{path}.config.base_url")
        if isinstance(secret, str) and secret:
            hosts = self._secret_hosts(secret)
            message = refusal(secret, hosts, base_url) if hosts is not None else None
            if message is not None:
                raise Forbidden(
                    f"{path}.config.api_key_secret: {message}",
                    {"path": f"{path}.config.api_key_secret", "secret": secret,
                     "host": host_of(base_url)},
                )  # fmt: skip

    def _secret_hosts(self, name: str) -> list[str] | None:
        """The hosts the starter's secret ``name`` is bound to; None when there is none."""
        if name not in self._hosts:
            p = self.ctx.principal
            found = secret_records_for(
                self.ctx.engine, self.ctx.settings, p.user_id, p.workspace, [name]
            )
            self._hosts[name] = found[name][1] if name in found else None
        return self._hosts[name]

    def harness(self, harness: AnyHarness) -> None:
        """An ``openai`` or ``agent`` harness's endpoint and key (path ``harness.config…``)."""
        if isinstance(harness, OpenAIHarness | AgentHarness):
            self.endpoint(str(harness.config.base_url), harness.config.api_key_secret, "harness")


def may_bind_argv_files(conn: Connection, row: HarnessRow) -> bool:
    """Whether the sandbox may bind the files the harness ``row`` names by absolute path in its
    ``argv`` (``SandboxPolicy.argv_files``): only when an installation admin registered it —
    a workspace admin is a tenant, and the server's files are not theirs."""
    return by_installation_admin(conn, row.workspace, row.created_by)


def check_argv_files(
    harness: AnyHarness, policy: SandboxPolicy, trusted: bool, path: str = "config"
) -> None:
    """Refuse a ``command`` harness naming a file by absolute path in its ``argv`` that the
    sandbox would have to bind, unless ``trusted`` (an installation admin registered it).

    Raises:
        Forbidden: naming ``{path}.argv[i]`` (``config.argv[3]``, ``harness.config.argv[3]``).
    """
    if trusted or not isinstance(harness, CommandHarness):
        return
    for index, file in unshown_argv_files(harness.config.argv, policy):
        where = f"{path}.argv[{index}]"
        message = argv_file_refusal(index, file).removeprefix(f"config.argv[{index}]: ")
        prefix = "" if path == "config" else f"harness {harness.id}@{harness.version}: "
        raise Forbidden(f"{prefix}{where}: {message}", {"path": where, "file": str(file)})


def check_reporter(ctx: Context, harness: Harness) -> None:
    """Only admins report results under a harness the server would execute as code.

    Raises:
        Forbidden: a ``command`` or ``python`` harness and no ``runs:report-code`` (admins):
            a member's report would otherwise read as that harness's own scorecard.
    """
    if harness.kind in ("command", "python") and not ctx.allows("runs:report-code"):
        raise Forbidden(
            f"harness: {harness.id}@{harness.version} is a {harness.kind} harness the server"
            " executes; only admins may report results under it (report under an external"
            " harness id of your own instead)",
            {"path": "harness", "kind": harness.kind, "action": "runs:report-code"},
        )


# --- resolution when a case runs ----------------------------------------------------------


@dataclass
class CodeResolver:
    """Replaces registered names by what they name, for one run's execution: ``config.grader``
    by the registered command, ``env.setup = "id@version"`` by the recipe's commands (and its
    ``test_cmd`` as the case's hidden ``metadata.test_cmd``). A name that no longer resolves is
    left as is: the grader scores an error naming it, the environment refuses to start."""

    conn_factory: Any  # () -> context manager yielding a Connection
    workspace: str
    _cache: dict[tuple[str, str], Any] = field(default_factory=dict)

    def _lookup(self, noun: registered.Noun[Any], ref: str) -> Any:
        key = (noun.name, ref)
        if key not in self._cache:
            try:
                item_id, version = registered.split_ref(ref, "ref")
                with self.conn_factory() as conn:
                    row = registered.resolve(conn, noun, self.workspace, item_id, version)
                self._cache[key] = registered.load(noun, row)
            except Exception:  # unresolvable: the grader or environment says so
                self._cache[key] = None
        return self._cache[key]

    def spec(self, spec: GraderSpec) -> GraderSpec:
        """``spec`` with a registered grader's command filled in."""
        ref = spec.config.get("grader")
        if spec.id not in CODE_GRADERS or not isinstance(ref, str):
            return spec
        found: RegisteredGrader | None = self._lookup(GRADER, ref)
        if found is None:
            return spec
        command = found.config.model_dump(mode="json", exclude_none=True)
        return spec.model_copy(update={"config": {**command, "grader": ref}})

    def plan(self, specs: list[GraderSpec]) -> list[GraderSpec]:
        """Every spec of a plan resolved."""
        return [self.spec(s) for s in specs]

    def case(self, case: Case) -> Case:
        """``case`` with its graders and environment recipe resolved."""
        update: dict[str, Any] = {}
        if any(s.id in CODE_GRADERS and "grader" in s.config for s in case.graders):
            update["graders"] = self.plan(case.graders)
        env = case.env
        if isinstance(env, RepoEnv) and isinstance(env.setup, str):
            recipe: EnvironmentRecipe | None = self._lookup(ENVIRONMENT, env.setup)
            if recipe is not None:
                update["env"] = env.model_copy(update={"setup": list(recipe.setup)})
                if recipe.test_cmd is not None:
                    test_cmd: JsonValue = (
                        recipe.test_cmd
                        if isinstance(recipe.test_cmd, str)
                        else list(recipe.test_cmd)
                    )
                    update["metadata"] = {**case.metadata, DEFAULT_CMD_FIELD: test_cmd}
                    gold = [g for g in case.gold_fields if g != DEFAULT_CMD_FIELD]
                    update["gold_fields"] = [*gold, DEFAULT_CMD_FIELD]
        return case.model_copy(update=update) if update else case
