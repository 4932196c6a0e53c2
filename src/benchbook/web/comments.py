"""Comment posts from the dataset page's composer (a plain form; Ctrl/⌘+Enter submits it)."""

from __future__ import annotations

from fastapi import APIRouter, Response
from fastapi.responses import RedirectResponse

from benchbook.services import comments
from benchbook.web.errors import PageRoute
from benchbook.web.render import dataset_url
from benchbook.web.session import FormDep, form_text

router = APIRouter(route_class=PageRoute, include_in_schema=False)


@router.post("/datasets/{dataset_id}/comments")
def create_comment(dataset_id: str, posted: FormDep) -> Response:
    """Post a comment on a dataset and return to its timeline."""
    page, form = posted
    comments.create_comment(page.ctx, "dataset", dataset_id, form_text(form, "body"))
    return RedirectResponse(dataset_url(dataset_id) + "#activity", status_code=303)


@router.post("/datasets/{dataset_id}/comments/{comment_id}/delete")
def delete_comment(dataset_id: str, comment_id: int, posted: FormDep) -> Response:
    """Delete a comment (its author or an admin)."""
    page, _ = posted
    comments.delete_comment(page.ctx, comment_id)
    return RedirectResponse(dataset_url(dataset_id) + "#activity", status_code=303)
