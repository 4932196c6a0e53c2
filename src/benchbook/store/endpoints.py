"""Model endpoints repository: ``(workspace, name) → url`` (``_shared`` = installation)."""

from __future__ import annotations

from sqlalchemy import Connection, delete, insert, select

from benchbook.store.tables import endpoints, utcnow

_E = endpoints.c


def insert_endpoint(conn: Connection, workspace: str, name: str, url: str, actor: str) -> None:
    """Store one endpoint (the caller checked the name is free)."""
    conn.execute(
        insert(endpoints).values(
            workspace=workspace, name=name, url=url, created_by=actor, created_at=utcnow()
        )
    )


def list_endpoints(conn: Connection, workspaces: list[str]) -> list[tuple[str, str, str, str]]:
    """``(workspace, name, url, created_by)`` of the given workspaces, by workspace and name."""
    q = (
        select(_E.workspace, _E.name, _E.url, _E.created_by)
        .where(_E.workspace.in_(workspaces))
        .order_by(_E.workspace, _E.name)
    )
    return [(str(a), str(b), str(c), str(d)) for a, b, c, d in conn.execute(q)]


def delete_endpoint(conn: Connection, workspace: str, name: str) -> bool:
    """Delete one endpoint; False when there was none."""
    q = delete(endpoints).where(_E.workspace == workspace, _E.name == name)
    return bool(conn.execute(q).rowcount)
