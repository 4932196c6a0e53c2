"""What the caller may do, for transports that render controls (issue 9 item 6: authorization
lives in the services only). Each predicate is the same rule the operation enforces, so a page
shows a control exactly when the service would allow the action.
"""

from __future__ import annotations

from benchbook.contracts.registry import VersionInfo
from benchbook.services.context import Context


def may_delete_created_by(ctx: Context, created_by: str) -> bool:
    """The delete rule after ``datasets:write``: the creator, or ``datasets:delete``."""
    return created_by == ctx.principal.user_id or ctx.allows("datasets:delete")


def may_delete_dataset_version(ctx: Context, version: VersionInfo) -> bool:
    """True when ``delete_dataset_versions`` would let the caller delete ``version``: a version
    of the caller's own workspace, and ``datasets:delete`` or (with ``datasets:write``) its
    creator — so a creator demoted to viewer sees no delete control."""
    if version.workspace != ctx.workspace or not ctx.allows("datasets:write"):
        return False
    return may_delete_created_by(ctx, version.created_by)
