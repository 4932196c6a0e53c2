"""Model endpoint routes (issue 27 item 3): the URLs judges and ``openai`` harnesses may call.

Admins add and remove them (``shared=true``: the installation's, installation admins); every
member lists them. Each ``operation_id`` is the service function's name.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response
from pydantic import Field

from benchbook.api.deps import ContextDep, RequestBody
from benchbook.api.errors import error_responses
from benchbook.contracts.common import schema_rule
from benchbook.contracts.registered import Endpoint
from benchbook.services import endpoints as svc
from benchbook.transports.limits import body_limit

router = APIRouter(prefix="/api/endpoints", tags=["endpoints"])

Shared = Annotated[bool, Query(description="The installation's endpoints (_shared tier).")]


#: An http(s) URL with a host name (letters, digits, ``.``, ``-``), an optional port and a
#: path; no query, fragment or credentials (``runtime.egress.normalize_endpoint``'s rule).
URL_PATTERN = (
    r"^[Hh][Tt][Tt][Pp][Ss]?://[A-Za-z0-9.-]+(:[0-9]{1,4})?(/[A-Za-z0-9._~%!$&'()*+,;=:@/-]*)?$"
)


class EndpointRequest(RequestBody):
    """Body of ``POST /api/endpoints``."""

    name: Annotated[str, schema_rule(pattern=svc.NAME_RE.pattern)] = Field(
        description="1-128 of [A-Za-z0-9_.-], starting with a letter or digit."
    )
    url: Annotated[str, schema_rule(pattern=URL_PATTERN)] = Field(
        description="An http(s) API root, e.g. https://api.openai.com/v1."
    )


@router.post(
    "",
    operation_id="add_endpoint",
    status_code=201,
    response_model=Endpoint,
    responses=error_responses(400, 403, 409),
    openapi_extra=body_limit(8 * 1024),
)
def add_endpoint(ctx: ContextDep, body: EndpointRequest, shared: Shared = False) -> Endpoint:
    """Register a model endpoint (admins); 409 when the name is taken."""
    return svc.add_endpoint(ctx, body.name, body.url, shared)


@router.get("", operation_id="list_endpoints", response_model=list[Endpoint])
def list_endpoints(ctx: ContextDep) -> list[Endpoint]:
    """The workspace's endpoints and the installation's."""
    return svc.list_endpoints(ctx)


@router.delete(
    "/{name}",
    operation_id="remove_endpoint",
    status_code=204,
    response_class=Response,
    responses=error_responses(403, 404),
)
def remove_endpoint(ctx: ContextDep, name: str, shared: Shared = False) -> Response:
    """Remove an endpoint; 404 when there is none of that name."""
    svc.remove_endpoint(ctx, name, shared)
    return Response(status_code=204)
