"""Comment posts from the dataset page's composer (a plain form; Ctrl/⌘+Enter submits it)."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from benchbook.errors import BenchbookError
from benchbook.services import comments
from benchbook.web.datasets import dataset_response
from benchbook.web.errors import PageRoute
from benchbook.web.forms import done, problem
from benchbook.web.render import dataset_url
from benchbook.web.session import FormDep, form_text

router = APIRouter(route_class=PageRoute, include_in_schema=False)


@router.post("/datasets/{dataset_id}/comments")
def create_comment(request: Request, dataset_id: str, posted: FormDep) -> Response:
    """Post a comment on a dataset and return to its timeline; an empty or too long body
    re-renders the page with the message beside the composer and the text kept."""
    page, form = posted
    body = form_text(form, "body")
    try:
        comments.create_comment(page.ctx, "dataset", dataset_id, body)
    except BenchbookError as exc:
        refused = problem("comment", exc, {"body": body}, ("body",))
        return dataset_response(request, page, dataset_id, problem=refused)
    return done(request, dataset_url(dataset_id) + "#activity", "Comment posted.")


@router.post("/datasets/{dataset_id}/comments/{comment_id}/delete")
def delete_comment(request: Request, dataset_id: str, comment_id: int, posted: FormDep) -> Response:
    """Delete a comment (its author or an admin)."""
    page, _ = posted
    comments.delete_comment(page.ctx, comment_id)
    return done(request, dataset_url(dataset_id) + "#activity", "Comment deleted.")
