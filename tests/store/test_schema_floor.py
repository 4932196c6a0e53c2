"""The bench's schema floor writes what an import stores (``bench/raw_full.py``, issue 15).

``bench.import_ratio`` reports ``raw_full schema`` / ``schema-pg`` as the least any import into
this storage layout can take. That claim holds only while the floor writes the very rows an
import stores, into the very tables: here the floor and a real import of the same file must
give the same cases (id, hash, body) at the same positions, and a schema change that the floor
does not follow fails here instead of quietly measuring something else.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import orjson
from bench.gen import write_gsm8k_like
from bench.import_ratio import DATASET, _base
from bench.raw_full import rows, to_schema_postgres, to_schema_sqlite
from sqlalchemy import Engine, text

from benchbook.services import imports as svc
from benchbook.services.context import Context

ROWS = 60
_CASES = (
    "SELECT vc.position, vc.case_id, cb.hash, cb.body FROM version_cases vc"
    " JOIN case_bodies cb ON cb.id = vc.body_id JOIN dataset_versions v ON v.pk = vc.version_pk"
    " WHERE v.dataset_id = :id ORDER BY vc.position"
)


def test_the_schema_floor_stores_the_rows_an_import_stores(
    ctx: Context, engine: Engine, database_url: str, backend: str, tmp_path: Path
) -> None:
    data = write_gsm8k_like(tmp_path / "gsm8k.jsonl", ROWS)
    shared = tmp_path / "base.json"
    with contextlib.redirect_stdout(io.StringIO()):  # _base prints the first hashes
        _base(str(data), str(shared))
    fields = orjson.loads(shared.read_bytes())
    dataset_id = fields.pop("__dataset_id")
    stream = rows(str(data), fields, dataset_id)
    # The floor first: it writes fresh bodies; the import then finds them stored (as a
    # re-import of the same content into another dataset would) and links the same ones.
    if backend == "sqlite":
        written = to_schema_sqlite(stream, database_url.removeprefix("sqlite:///"))
    else:
        written = to_schema_postgres(stream, database_url.replace("+psycopg", ""))
    request = svc.parse_import_request({"benchmark": "gsm8k", "id": DATASET})
    result = svc.import_benchmark(ctx, request, data)

    assert written == result.cases == ROWS
    with engine.connect() as conn:
        floor = conn.execute(text(_CASES), {"id": "floor"}).all()
        imported = conn.execute(text(_CASES), {"id": DATASET}).all()
        bodies = conn.execute(text("SELECT count(*) FROM case_bodies")).scalar_one()
    assert [tuple(r) for r in floor] == [tuple(r) for r in imported]
    assert len(imported) == ROWS
    assert bodies == ROWS  # one body per case, stored once
