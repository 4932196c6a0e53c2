"""``benchbook users|workspaces|members|keys|secrets …``: accounts from the terminal.

Every command acts as the local installation admin (as the rest of the CLI does), in the
workspace named by ``--workspace`` (default ``default``).
"""

from __future__ import annotations

import typer

from benchbook.cli.app import (
    JSON_OPTION,
    app,
    cell,
    console,
    emit_json,
    escape,
    handle_errors,
    local_context,
    make_table,
)
from benchbook.contracts.accounts import Role
from benchbook.errors import InvalidInput
from benchbook.services import accounts as svc
from benchbook.services import keys as keys_svc
from benchbook.services import secrets as secrets_svc
from benchbook.services.context import Context

users_app = typer.Typer(help="Create and list users, set passwords (installation-wide).")
workspaces_app = typer.Typer(help="Create and list workspaces.")
members_app = typer.Typer(help="Add members to a workspace, change their role, remove them.")
keys_app = typer.Typer(help="Create, list and revoke API keys (bb_…).")
secrets_app = typer.Typer(help="Set, list and delete workspace secrets (values are write-only).")
for sub, name in (
    (users_app, "users"),
    (workspaces_app, "workspaces"),
    (members_app, "members"),
    (keys_app, "keys"),
    (secrets_app, "secrets"),
):
    app.add_typer(sub, name=name)

WORKSPACE = typer.Option("default", "--workspace", "-w", help="The workspace to act in.")
ROLES: tuple[Role, ...] = ("viewer", "member", "admin")


def _in(workspace: str) -> Context:
    return svc.in_workspace(local_context(), workspace)


def _role(role: str) -> Role:
    for known in ROLES:
        if role == known:
            return known
    raise InvalidInput(f"--role must be one of {', '.join(ROLES)}, not {role!r}")


@users_app.command("create")
@handle_errors
def users_create(
    email: str = typer.Option(..., help="Login email (unique, case-insensitive)."),
    name: str = typer.Option("", help="Display name (default: the email's local part)."),
    password: str = typer.Option(
        ..., prompt=True, hide_input=True, confirmation_prompt=True, help="At least 8 characters."
    ),
    installation_admin: bool = typer.Option(False, help="May manage users and publish shared."),
    json: bool = JSON_OPTION,
) -> None:
    """Create a user who can log in with email and password."""
    user = svc.create_user(local_context(), email, name, password, installation_admin)
    if json:
        return emit_json(user)
    console.print(f"created user [bold]{escape(user.email)}[/] ({escape(user.id)})")


@users_app.command("set-password")
@handle_errors
def users_set_password(
    email: str = typer.Option(..., help="The user's login email (or id)."),
    password: str = typer.Option(
        ..., prompt=True, hide_input=True, confirmation_prompt=True, help="At least 8 characters."
    ),
    json: bool = JSON_OPTION,
) -> None:
    """Set a user's password (recovers a lost admin password) and end their sessions."""
    user = svc.set_password(local_context(), email, password)
    if json:
        return emit_json(user)
    console.print(f"password set for [bold]{escape(user.email)}[/]; their sessions have ended")


@users_app.command("list")
@handle_errors
def users_list(json: bool = JSON_OPTION) -> None:
    """List every user."""
    users = svc.list_users(local_context())
    if json:
        return emit_json(users)
    table = make_table("id", "email", "name", "installation admin")
    for u in users:
        table.add_row(
            cell(u.id),
            cell(u.email),
            cell(u.display_name),
            "yes" if u.installation_admin else "",
        )
    console.print(table)


@workspaces_app.command("create")
@handle_errors
def workspaces_create(
    workspace_id: str = typer.Argument(..., help="1-64 of [a-z0-9_-]."),
    name: str = typer.Option("", help="Display name."),
    json: bool = JSON_OPTION,
) -> None:
    """Create a workspace (add its first admin with ``members add``)."""
    ws = svc.create_workspace(local_context(), workspace_id, name)
    if json:
        return emit_json(ws)
    console.print(f"created workspace [bold]{escape(ws.id)}[/]")


@workspaces_app.command("list")
@handle_errors
def workspaces_list(json: bool = JSON_OPTION) -> None:
    """List workspaces."""
    items = svc.list_workspaces(local_context())
    if json:
        return emit_json(items)
    for ws in items:
        console.print(cell(f"{ws.id}\t{ws.name}"))


@members_app.command("add")
@handle_errors
def members_add(
    user: str = typer.Argument(..., help="Email or user id."),
    role: str = typer.Option("member", help="viewer | member | admin"),
    workspace: str = WORKSPACE,
    json: bool = JSON_OPTION,
) -> None:
    """Add a user to a workspace."""
    m = svc.add_member(_in(workspace), user, _role(role))
    if json:
        return emit_json(m)
    console.print(cell(f"{m.email} is now {m.role} of {m.workspace}"))


@members_app.command("set-role")
@handle_errors
def members_set_role(
    user: str = typer.Argument(..., help="Email or user id."),
    role: str = typer.Argument(..., help="viewer | member | admin"),
    workspace: str = WORKSPACE,
    json: bool = JSON_OPTION,
) -> None:
    """Change a member's role (a workspace keeps at least one admin)."""
    m = svc.set_member_role(_in(workspace), user, _role(role))
    if json:
        return emit_json(m)
    console.print(cell(f"{m.email} is now {m.role} of {m.workspace}"))


@members_app.command("remove")
@handle_errors
def members_remove(
    user: str = typer.Argument(..., help="Email or user id."),
    workspace: str = WORKSPACE,
    json: bool = JSON_OPTION,
) -> None:
    """Remove a member; their sessions end and their keys stop working."""
    svc.remove_member(_in(workspace), user)
    if json:
        return emit_json({"removed": user, "workspace": workspace})
    console.print(cell(f"removed {user} from {workspace}"))


@members_app.command("list")
@handle_errors
def members_list(workspace: str = WORKSPACE, json: bool = JSON_OPTION) -> None:
    """List a workspace's members."""
    members = svc.list_members(_in(workspace))
    if json:
        return emit_json(members)
    table = make_table("email", "name", "role", "user id")
    for m in members:
        table.add_row(cell(m.email), cell(m.display_name), cell(m.role), cell(m.user_id))
    console.print(table)


@keys_app.command("create")
@handle_errors
def keys_create(
    user: str = typer.Option(..., "--user", "-u", help="Owner: email or user id (a member)."),
    name: str = typer.Option(..., help="What the key is for, e.g. 'ci'."),
    scope: str = typer.Option("write", help="read | write | admin (capped by the role)."),
    workspace: str = WORKSPACE,
    json: bool = JSON_OPTION,
) -> None:
    """Create an API key; the key is printed once and cannot be shown again."""
    created = keys_svc.create_api_key(_in(workspace), name, keys_svc.parse_scope(scope), user)
    if json:
        return emit_json(created)
    console.print(
        cell(f"created {created.info.id} ({created.info.scope}) for {user} in {workspace}")
    )
    console.print("key (shown once, store it now):")
    print(created.key)


@keys_app.command("list")
@handle_errors
def keys_list(workspace: str = WORKSPACE, json: bool = JSON_OPTION) -> None:
    """List a workspace's keys (never the keys themselves)."""
    infos = keys_svc.list_api_keys(_in(workspace), all_users=True)
    if json:
        return emit_json(infos)
    table = make_table("id", "name", "prefix", "user", "scope", "last used", "revoked")
    for k in infos:
        used = k.last_used_at.strftime("%Y-%m-%d %H:%M") if k.last_used_at else ""
        table.add_row(
            *map(cell, (k.id, k.name, k.prefix + "…", k.user_id, k.scope, used)),
            "yes" if k.revoked_at else "",
        )
    console.print(table)


@keys_app.command("revoke")
@handle_errors
def keys_revoke(
    key_id: str = typer.Argument(..., help="key_…"),
    workspace: str = WORKSPACE,
    json: bool = JSON_OPTION,
) -> None:
    """Revoke a key: its next request is refused (401)."""
    revoked = keys_svc.revoke_api_key(_in(workspace), key_id)
    if json:
        return emit_json(revoked)
    console.print(cell(f"revoked {key_id}"))


@secrets_app.command("set")
@handle_errors
def secrets_set(
    name: str = typer.Argument(..., help="e.g. HF_TOKEN"),
    value: str = typer.Option(
        ...,
        prompt=True,
        hide_input=True,
        help="Asked for without echo, or read from stdin when piped"
        ' (printf %s "$TOKEN" | benchbook secrets set NAME); --value on the command line'
        " stays in the shell's history.",
    ),
    host: list[str] = typer.Option(
        [],
        "--host",
        help="A model endpoint host the value may be sent to (repeatable); none: never sent.",
    ),
    workspace: str = WORKSPACE,
    json: bool = JSON_OPTION,
) -> None:
    """Set a workspace secret (encrypted at rest; its members' own secrets win over it)."""
    info = secrets_svc.set_secret(_in(workspace), name, value, scope="workspace", hosts=host)
    if json:
        return emit_json(info)
    console.print(cell(f"set workspace secret {name} in {workspace}"))


@secrets_app.command("list")
@handle_errors
def secrets_list(workspace: str = WORKSPACE, json: bool = JSON_OPTION) -> None:
    """List a workspace's secret names (values are never shown)."""
    infos = secrets_svc.list_secrets(_in(workspace), scope="workspace")
    if json:
        return emit_json(infos)
    for s in infos:
        hosts = ", ".join(s.hosts) or "no host (sent nowhere)"
        line = f"{s.name}\t{hosts}\tupdated {s.updated_at:%Y-%m-%d %H:%M} by {s.updated_by}"
        console.print(cell(line))


@secrets_app.command("delete")
@handle_errors
def secrets_delete(name: str, workspace: str = WORKSPACE, json: bool = JSON_OPTION) -> None:
    """Delete a workspace secret."""
    secrets_svc.delete_secret(_in(workspace), name, scope="workspace")
    if json:
        return emit_json({"deleted": name, "workspace": workspace})
    console.print(cell(f"deleted workspace secret {name} from {workspace}"))
