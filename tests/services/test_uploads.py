"""Import-wizard uploads live in the database (issue 13 item 2): a server that never saw the
upload request previews and imports the file; owners only; the oldest beyond 32 are deleted."""

from __future__ import annotations

import io

import pytest

from benchbook.errors import NotFound
from benchbook.services import imports, jobs, uploads
from benchbook.services.context import Context
from tests.services.test_accounts import make_team
from tests.services.test_jobs import ROWS, stored

SPEC = {
    "id": "mini",
    "source": {"kind": "file", "format": "jsonl"},
    "mapping": {"id_field": "id", "task_field": "question", "answer_field": "answer"},
}


def _as_another_server() -> None:
    """Forget this process's local copies, as a server that never saw the upload has none."""
    uploads._CACHE.clear()


def test_an_upload_is_previewed_and_imported_by_a_server_that_did_not_receive_it(
    ctx: Context,
) -> None:
    body = ROWS.encode()  # two JSONL rows
    saved = uploads.save_upload(ctx, io.BytesIO(body), "folder/rows.jsonl")
    assert (saved.name, saved.size_bytes) == ("rows.jsonl", len(body))
    _as_another_server()
    path, name = uploads.upload_path(ctx, saved.id)
    assert (path.read_bytes(), name) == (body, "rows.jsonl")
    request = imports.parse_import_request({"spec": SPEC})
    preview = imports.preview_benchmark_source(ctx, request, file=path, file_name=name)
    assert [c["id"] for c in preview.cases] == ["a", "b"]
    _as_another_server()
    job = uploads.start_import_from_upload(ctx, request, saved.id)
    done = jobs.wait_for_import(ctx, job.id, 30)
    assert done.state == "succeeded" and done.result is not None and done.result.cases == 2
    assert stored(ctx) == ["mini"]
    with pytest.raises(NotFound, match="choose the file again"):
        uploads.upload_path(ctx, saved.id)  # taken over by the import


def test_uploads_are_private_and_the_oldest_beyond_32_are_deleted(ctx: Context) -> None:
    team = make_team(ctx)
    mine = uploads.save_upload(team.member, io.BytesIO(b"x"), "a.jsonl")
    for ctx_other in (team.member2, team.outsider, team.admin):
        with pytest.raises(NotFound):
            uploads.upload_path(ctx_other, mine.id)
    more = [
        uploads.save_upload(team.member, io.BytesIO(b"%d" % i), f"{i}.jsonl")
        for i in range(uploads.MAX_UPLOADS)
    ]
    with pytest.raises(NotFound):
        uploads.upload_path(team.member, mine.id)
    assert uploads.upload_path(team.member, more[0].id)[0].read_bytes() == b"0"
