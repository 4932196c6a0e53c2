"""Who may run what (issue 27 item 2), on SQLite and PostgreSQL: a command from data a member can
write runs only when it names an admin-registered grader or environment recipe; a member's
inline command in a plan, in a case's graders, in ``metadata.test_cmd`` or in ``env.setup`` is
refused with 403 naming the field, and nothing is stored or run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchbook.contracts import Dataset
from benchbook.contracts.registered import EnvironmentRecipe, RegisteredGrader
from benchbook.contracts.run import StartRunRequest
from benchbook.errors import Forbidden, NotFound
from benchbook.services import accounts, environments, graders, harnesses, run_execution, runs
from benchbook.services import datasets as ds
from benchbook.services.context import Context, Principal

MARKER = "ran-here"


def member(ctx: Context, name: str = "mia", role: str = "member") -> Context:
    """A real user ``name`` with ``role`` in ``ctx``'s workspace, acting there."""
    user = accounts.create_user(ctx, f"{name}@example.org", name.title())
    accounts.add_member(ctx, user.email, role)  # type: ignore[arg-type]
    principal = Principal(user_id=user.id, display_name=name, workspace=ctx.workspace, role=role)  # type: ignore[arg-type]
    return Context(principal=principal, engine=ctx.engine, settings=ctx.settings)


def repo_case(**extra: Any) -> dict[str, Any]:
    env: dict[str, Any] = {"kind": "repo", "source": {"files": {"README": "hi\n"}}}
    env.update(extra.pop("env", {}))
    return {"id": "c0", "env": env, "task": "look around", "expected": "x", **extra}


def dataset(dataset_id: str, case: dict[str, Any]) -> Dataset:
    return Dataset.model_validate({"id": dataset_id, "version": "1.0.0", "cases": [case]})


def echo_harness(ctx: Context) -> str:
    body = {"id": "echo", "version": "1.0.0", "kind": "command", "config": {"argv": ["echo", "ok"]}}
    harnesses.register_harness(ctx, harnesses.parse_harness(body))
    return "echo@1.0.0"


def start(ctx: Context, dataset_id: str, plan: list[dict[str, Any]] | None = None) -> Any:
    request = {"dataset": dataset_id, "harness": "echo@1.0.0", "graders": plan}
    return runs.start_run(ctx, StartRunRequest.model_validate(request))


def refused(ctx: Context, dataset_id: str, plan: list[dict[str, Any]] | None, path: str) -> None:
    with pytest.raises(Forbidden) as caught:
        start(ctx, dataset_id, plan)
    assert caught.value.message.startswith(path + ":"), caught.value.message
    assert caught.value.details["path"] == path
    assert runs.list_runs(ctx) == [], "a refused run is not stored"


@pytest.fixture
def mia(ctx: Context) -> Context:
    echo_harness(ctx)
    return member(ctx)


def test_a_members_inline_command_in_a_run_plan_is_refused(ctx: Context, mia: Context) -> None:
    ds.register_dataset(mia, dataset("plain", repo_case()))
    plan = [{"id": "numeric"}, {"id": "command", "config": {"cmd": f"touch {MARKER}"}}]
    refused(mia, "plain", plan, "graders[1].command")


def test_a_command_in_a_members_case_graders_is_refused(ctx: Context, mia: Context) -> None:
    case = repo_case(graders=[{"id": "command", "config": {"argv": ["id"]}}])
    ds.register_dataset(mia, dataset("cased", case))
    refused(mia, "cased", None, "cases[0].graders[0].command")
    refused(ctx, "cased", None, "cases[0].graders[0].command")  # an admin's run too


def test_a_members_test_cmd_read_by_tests_pass_is_refused(ctx: Context, mia: Context) -> None:
    ds.register_dataset(mia, dataset("tested", repo_case(metadata={"test_cmd": "id"})))
    refused(mia, "tested", [{"id": "tests-pass"}], "cases[0].metadata.test_cmd")


def test_setup_commands_in_a_members_case_are_refused(ctx: Context, mia: Context) -> None:
    ds.register_dataset(mia, dataset("setup", repo_case(env={"setup": [f"touch {MARKER}"]})))
    refused(mia, "setup", None, "cases[0].env.setup")


def test_the_same_commands_run_when_an_admin_wrote_the_dataset(
    ctx: Context, mia: Context, tmp_path: Path
) -> None:
    case = repo_case(
        env={"setup": [f"touch {MARKER}"]},
        metadata={"test_cmd": f"test -f {MARKER}"},
        graders=[{"id": "command", "config": {"cmd": f"test -f {MARKER}"}}, {"id": "tests-pass"}],
    )
    ds.register_dataset(ctx, dataset("trusted", case))
    run = run_execution.execute_run(mia, start(mia, "trusted").id)
    assert run.status == "finished" and run.counts.passed == 1, run


def test_a_member_names_admin_registered_graders_and_recipes_and_they_run(
    ctx: Context, mia: Context
) -> None:
    grader = {"id": "marker", "version": "1.0.0", "config": {"cmd": f"test -f {MARKER}"}}
    graders.register_grader(ctx, RegisteredGrader.model_validate(grader))
    recipe = {"id": "toucher", "version": "1.0.0", "setup": [f"touch {MARKER}"]}
    recipe["test_cmd"] = f"test -f {MARKER}"
    environments.register_environment(ctx, EnvironmentRecipe.model_validate(recipe))
    ds.register_dataset(mia, dataset("named", repo_case(env={"setup": "toucher@1.0.0"})))
    plan = [{"id": "command", "config": {"grader": "marker@1.0.0"}}, {"id": "tests-pass"}]
    run = run_execution.execute_run(mia, start(mia, "named", plan).id)
    assert run.status == "finished" and run.counts.passed == 1, run
    assert run.plan.graders[0].config == {"grader": "marker@1.0.0"}, "the plan keeps the name"


def test_an_unknown_registered_grader_is_not_found_by_its_field(ctx: Context, mia: Context) -> None:
    ds.register_dataset(mia, dataset("plain", repo_case()))
    with pytest.raises(NotFound, match="grader 'nope' not found"):
        start(mia, "plain", [{"id": "command", "config": {"grader": "nope@1.0.0"}}])


def test_a_registered_name_with_a_command_of_its_own_is_refused(ctx: Context, mia: Context) -> None:
    grader = {"id": "marker", "version": "1.0.0", "config": {"cmd": "true"}}
    graders.register_grader(ctx, RegisteredGrader.model_validate(grader))
    ds.register_dataset(mia, dataset("plain", repo_case()))
    plan = [{"id": "command", "config": {"grader": "marker", "cmd": "id"}}]
    with pytest.raises(Exception, match=r"graders\[0\]\.config\.grader"):
        start(mia, "plain", plan)


def test_only_admins_register_graders_recipes_and_endpoints(ctx: Context, mia: Context) -> None:
    from benchbook.services import endpoints

    grader = RegisteredGrader.model_validate(
        {"id": "g", "version": "1.0.0", "config": {"cmd": "id"}}
    )
    recipe = EnvironmentRecipe.model_validate({"id": "e", "version": "1.0.0", "setup": ["id"]})
    for call in (
        lambda: graders.register_grader(mia, grader),
        lambda: environments.register_environment(mia, recipe),
        lambda: endpoints.add_endpoint(mia, "evil", "http://127.0.0.1:9/v1"),
    ):
        with pytest.raises(Forbidden):
            call()
    assert graders.list_graders(mia) == [] and environments.list_environments(mia) == []
