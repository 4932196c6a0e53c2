"""Run import routes (issue 31): Inspect AI logs and lm-eval samples as reported runs.

``POST /api/runs/import/inspect`` and ``POST /api/runs/import/lm-eval`` take either a JSON body
(the request with the log inline: ``text``/``content_base64``, or ``samples_text`` and
``results_text``) or ``multipart/form-data`` with a ``request`` part (the same JSON without
inline content) and the log as ``file`` part(s): one Inspect log (``.eval`` or ``.json``), or
lm-eval's ``samples_<task>_*.jsonl`` and ``results_*.json`` (base names only; folders in a
part's name are dropped). 201 with ``{run, imported_scorecard, …}``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool

from benchbook.api.deps import ContextDep
from benchbook.api.errors import error_responses
from benchbook.api.uploads import parse_json_body, read_body
from benchbook.contracts.run_imports import ImportedRun, ImportInspectRequest, ImportLmEvalRequest
from benchbook.errors import InvalidInput
from benchbook.services import run_imports as svc
from benchbook.services.context import Context
from benchbook.services.validation import parse_model
from benchbook.transports.multipart import FILE_FIELD, Upload, multipart_upload

router = APIRouter(prefix="/api/runs/import", tags=["runs"])

REQUEST_FIELD = "request"
LM_EVAL_FILES = 64


def _body(name: str, inline: list[str], file_help: str) -> dict[str, Any]:
    """The OpenAPI request body: the JSON request, or multipart ``request`` + ``file``."""
    return {
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {"schema": {"$ref": f"#/components/schemas/{name}"}},
                "multipart/form-data": {
                    "schema": {
                        "type": "object",
                        "additionalProperties": False,
                        "required": [REQUEST_FIELD, FILE_FIELD],
                        "properties": {
                            REQUEST_FIELD: {
                                "allOf": [{"$ref": f"#/components/schemas/{name}"}],
                                "properties": {k: {"type": "null"} for k in inline},
                                "description": f"A {name} as JSON, without inline content.",
                            },
                            FILE_FIELD: {
                                "type": "string",
                                "contentMediaType": "application/octet-stream",
                                "description": file_help,
                            },
                        },
                    },
                    "encoding": {REQUEST_FIELD: {"contentType": "application/json"}},
                },
            },
        }
    }


def _is_multipart(request: Request) -> bool:
    return request.headers.get("content-type", "").lower().startswith("multipart/form-data")


def _request_part(upload: Upload, model: type[Any], inline: list[str]) -> Any:
    unknown = sorted(set(upload.fields) - {REQUEST_FIELD})
    if unknown or REQUEST_FIELD not in upload.fields:
        raise InvalidInput(
            f"send a {REQUEST_FIELD!r} part (JSON) and {FILE_FIELD!r} part(s)"
            + (f"; unknown parts: {', '.join(unknown)}" if unknown else "")
        )
    if upload.file is None:
        raise InvalidInput(
            f"a multipart import needs a {FILE_FIELD!r} part (the log)",
            {"errors": [{"path": FILE_FIELD, "message": "missing"}]},
        )
    parsed = parse_model(model, parse_json_body(upload.fields[REQUEST_FIELD].encode()), "request")
    sent = [k for k in inline if getattr(parsed, k) is not None]
    if sent:
        raise InvalidInput(
            f"a multipart import sends the log as {FILE_FIELD!r} parts, not as {sent[0]!r}",
            {"errors": [{"path": f"{REQUEST_FIELD}.{sent[0]}", "message": "not with a file"}]},
        )
    return parsed


async def _json_request(request: Request, ctx: Context, model: type[Any]) -> Any:
    buf = await read_body(request, ctx.settings.max_upload_bytes)
    return parse_model(model, parse_json_body(buf), "request")


INSPECT_INLINE = ["text", "content_base64"]
LM_EVAL_INLINE = ["samples_text", "results_text"]


@router.post(
    "/inspect",
    operation_id="import_inspect_run",
    status_code=201,
    response_model=ImportedRun,
    openapi_extra=_body(
        "ImportInspectRequest", INSPECT_INLINE, "One Inspect AI log: .eval (zip) or .json."
    ),
    responses=error_responses(400, 403, 404, 409, 413),
)
async def import_inspect_run(request: Request, ctx: ContextDep) -> ImportedRun:
    """Import one Inspect AI log as a reported run: Benchbook's graders grade its answers, and
    Inspect's own scores become the imported scorecard. 409 for unmatched samples (listed), a
    log of another dataset version, or a truncated, oversized or unreadable log; nothing is
    registered then."""
    if _is_multipart(request):
        limit = ctx.settings.max_upload_bytes
        async with multipart_upload(request, limit, 1) as upload:
            parsed = _request_part(upload, ImportInspectRequest, INSPECT_INLINE)
            return await run_in_threadpool(
                svc.import_inspect_run, ctx, parsed, upload.file, upload.file_name
            )
    parsed = await _json_request(request, ctx, ImportInspectRequest)
    return await run_in_threadpool(svc.import_inspect_run, ctx, parsed)


def _place(upload: Upload, root: Path) -> None:
    """The file parts moved into ``root`` under their base names (no folders, no clashes)."""
    root.mkdir()
    for sent in upload.files:
        name = Path(sent.name.replace("\\", "/")).name
        if not name or name.startswith(".") or (root / name).exists():
            raise InvalidInput(f"file part {sent.name[:100]!r}: empty, hidden or repeated name")
        os.replace(sent.path, root / name)


@router.post(
    "/lm-eval",
    operation_id="import_lm_eval_run",
    status_code=201,
    response_model=ImportedRun,
    openapi_extra=_body(
        "ImportLmEvalRequest",
        LM_EVAL_INLINE,
        "lm-eval --log_samples output: samples_<task>_<date>.jsonl and results_<date>.json"
        " (several file parts).",
    ),
    responses=error_responses(400, 403, 404, 409, 413),
)
async def import_lm_eval_run(request: Request, ctx: ContextDep) -> ImportedRun:
    """Import one lm-eval task's samples as a reported run (``filtered_resps`` of the chosen
    filter as the answer; each lm-eval metric an imported score). 409 for unmatched samples
    (listed), several tasks without ``task``, an unknown filter or a malformed line (named)."""
    if _is_multipart(request):
        limit = ctx.settings.max_upload_bytes
        async with multipart_upload(request, limit, LM_EVAL_FILES) as upload:
            parsed = _request_part(upload, ImportLmEvalRequest, LM_EVAL_INLINE)
            root = Path(tempfile.mkdtemp(prefix="benchbook-lm-eval-")) / "output"
            try:
                await run_in_threadpool(_place, upload, root)
                return await run_in_threadpool(svc.import_lm_eval_run, ctx, parsed, root)
            finally:
                shutil.rmtree(root.parent, ignore_errors=True)
    parsed = await _json_request(request, ctx, ImportLmEvalRequest)
    return await run_in_threadpool(svc.import_lm_eval_run, ctx, parsed)
