"""Importing SWE-bench Lite through the service: a local file and the Hugging Face path (fake
Hub), on SQLite and PostgreSQL (issue 12 item 2)."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import Engine

from benchbook.services import datasets as ds
from benchbook.services import imports as svc
from benchbook.services.context import Context, local_admin_context
from benchbook.settings import Settings
from tests.hfserver.model import FakeDataset
from tests.hfserver.server import HfServer
from tests.services.test_jobs import hf_settings

LITE = "princeton-nlp/SWE-bench_Lite"


def test_the_lite_test_file_imports_300_checkout_cases_and_reports_what_it_kept(
    ctx: Context, shared_data: Path
) -> None:
    path = shared_data / "swebench" / "swe-bench-lite-test.json"
    result = svc.import_benchmark(
        ctx, svc.parse_import_request({"benchmark": "swe-bench-lite"}), path
    )
    assert (result.id, result.version, result.cases, result.created) == (
        "swe-bench-lite",
        "1.0.0",
        300,
        True,
    )
    assert result.notes[2] == (
        "extra columns kept as gold: patch_files, test_patch_files, patch_diff_details"
    )
    case = ds.get_case(ctx, "swe-bench-lite", "1.0.0", "django__django-15202")
    assert case.env.model_dump()["source"] == {
        "git": "https://github.com/django/django.git",
        "ref": "4fd3044ca0135da903a70dfb66992293f529ecf1",
    }
    assert "hints_text" in case.gold_fields and "patch_files" in case.gold_fields
    assert case.metadata["FAIL_TO_PASS"] == [
        "test_urlfield_clean_invalid (forms_tests.field_tests.test_urlfield.URLFieldTest)",
        "test_urlfield_clean_not_required (forms_tests.field_tests.test_urlfield.URLFieldTest)",
    ]


def test_the_hugging_face_path_gives_the_same_cases_as_the_file(
    engine: Engine, settings: Settings, hf_server: HfServer, shared_data: Path, tmp_path: Path
) -> None:
    official = [
        {k: v for k, v in row.items() if not k.endswith(("_files", "_details"))}
        for row in json.loads((shared_data / "swebench" / "swe-bench-lite-dev.json").read_text())
    ]
    hf_server.add(FakeDataset(LITE, splits={("default", "test"): official}))
    hf_ctx = local_admin_context(engine, hf_settings(settings, hf_server))
    from_hub = svc.import_benchmark(
        hf_ctx, svc.parse_import_request({"benchmark": "swe-bench-lite", "id": "lite-hub"})
    )
    local = tmp_path / "dev.json"
    local.write_text(json.dumps(official))
    from_file = svc.import_benchmark(
        hf_ctx,
        svc.parse_import_request({"benchmark": "swe-bench-lite", "id": "lite-file"}),
        local,
    )
    assert from_hub.cases == from_file.cases == 23
    hub_cases = ds.get_dataset(hf_ctx, "lite-hub", "1.0.0", limit=100).cases
    file_cases = ds.get_dataset(hf_ctx, "lite-file", "1.0.0", limit=100).cases
    assert [c.model_dump() for c in hub_cases] == [c.model_dump() for c in file_cases]
    assert hub_cases[0].gold_fields == [
        "patch",
        "test_patch",
        "FAIL_TO_PASS",
        "PASS_TO_PASS",
        "hints_text",
    ]
