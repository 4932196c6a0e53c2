"""Remote imports are fetched before the registry transaction opens (``datasets/spool.py``):
a Hugging Face page that takes its time must not hold the database's write lock."""

from __future__ import annotations

import threading
import time

from benchbook.contracts import Dataset
from benchbook.datasets.spool import CaseRowSpool
from benchbook.services import datasets as ds
from benchbook.services import imports
from benchbook.services.context import Context
from tests.hfserver.catalog import GSM8K_ID
from tests.hfserver.server import HfServer
from tests.services.test_jobs import held_page, hf_ctx, hf_request  # noqa: F401 (fixture)


def test_the_spool_replays_every_row_in_order_byte_for_byte() -> None:
    rows = [(f"id {i} ✓", f'{{"n":{i}}}'.encode() * (i + 1), f"{i:064x}") for i in range(500)]
    with CaseRowSpool() as spool:
        assert list(spool.drain(iter(rows)).replay()) == rows
        assert spool.count == 500


def test_another_write_goes_through_while_a_hugging_face_import_waits_on_a_page(
    hf_ctx: Context,  # noqa: F811
    hf_server: HfServer,
) -> None:
    outcome: dict[str, object] = {}

    def run_import() -> None:
        try:
            request = hf_request(GSM8K_ID, "main", "test", id="slow")
            outcome["result"] = imports.import_benchmark(hf_ctx, request)
        except Exception as exc:
            outcome["error"] = exc

    with held_page(hf_server, 1100) as (reached, release):
        worker = threading.Thread(target=run_import)
        worker.start()
        assert reached.wait(30), "the import never asked for the page at offset 1100"
        started = time.monotonic()
        case = {"id": "a", "env": {"kind": "prompt"}, "task": "2+2?"}
        other = ds.register_dataset(
            hf_ctx, Dataset.model_validate({"id": "other", "version": "1.0.0", "cases": [case]})
        )
        waited_s = time.monotonic() - started
        release.set()
        worker.join(60)
    assert other.created and waited_s < 5, f"the register waited {waited_s:.1f} s"
    assert "error" not in outcome, outcome.get("error")
    assert ds.get_dataset(hf_ctx, "slow").version.cases == 1319
