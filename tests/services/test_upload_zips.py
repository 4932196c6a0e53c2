"""A zipped folder benchmark uploaded through the wizard (issue 14 item 4): OSWorld's
``examples/`` as a zip previews, is recognised and imports exactly as ``benchbook import
osworld --file examples``; unsafe or oversized zips are refused naming the entry."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from benchbook.datasets.sources.limits import SourceLimits
from benchbook.datasets.sources.zipped import extract_zip
from benchbook.errors import InvalidInput, PayloadTooLarge
from benchbook.services import imports, jobs, uploads
from benchbook.services.context import Context


def _zip(folder: Path, prefix: str, extra: dict[str, bytes] | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*.json")):
            archive.write(path, f"{prefix}{path.relative_to(folder).as_posix()}")
        for name, data in (extra or {}).items():
            archive.writestr(name, data)
    return buffer.getvalue()


def test_a_zipped_osworld_folder_imports_as_the_folder_itself(
    ctx: Context, shared_data: Path
) -> None:
    examples = shared_data / "osworld" / "examples"
    body = _zip(examples, "examples/", {"__MACOSX/examples/._x.json": b"\x00junk"})
    saved = uploads.save_upload(ctx, io.BytesIO(body), "examples.zip")
    uploads._CACHE.clear()  # a server that never saw the upload
    path, name = uploads.upload_path(ctx, saved.id)
    assert path.is_dir() and name == "examples"
    spec = {"id": "upload", "source": {"kind": "file"}, "mapping": {"task_template": " "}}
    preview = imports.preview_benchmark_source(
        ctx, imports.parse_import_request({"spec": spec}), path, name
    )
    assert [m.benchmark for m in preview.catalog_matches] == ["osworld"]

    request = imports.parse_import_request({"benchmark": "osworld", "id": "osworld-zip"})
    job = uploads.start_import_from_upload(ctx, request, saved.id)
    done = jobs.wait_for_import(ctx, job.id, 120)
    assert done.state == "succeeded", done.error
    folder = imports.import_benchmark(
        ctx, imports.parse_import_request({"benchmark": "osworld", "id": "osworld-zip"}), examples
    )
    assert done.result is not None and done.result.cases == 369
    assert (folder.created, folder.content_hash) == (False, done.result.content_hash)
    assert not any(Path(uploads._cache_root()).glob(f"{saved.id}*"))


def test_an_unsafe_or_inflating_zip_is_refused_and_leaves_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "bad.zip"
    with zipfile.ZipFile(bad, "w") as archive:
        archive.writestr("ok.json", "{}")
        archive.writestr("../escape.json", "{}")
    with pytest.raises(InvalidInput, match=r"'\.\./escape\.json' has an unsafe path"):
        extract_zip(bad, tmp_path / "out", "bad.zip", SourceLimits())
    assert not (tmp_path / "out").exists() and not (tmp_path / "escape.json").exists()

    big = tmp_path / "big.zip"
    with zipfile.ZipFile(big, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("a.json", b" " * 5000)
    with pytest.raises(PayloadTooLarge, match="inflate past 1,000 bytes"):
        extract_zip(big, tmp_path / "out2", "big.zip", SourceLimits(decompressed_bytes=1000))
    assert not (tmp_path / "out2").exists()

    not_zip = tmp_path / "rows.zip"
    not_zip.write_text('{"a": 1}\n')
    with pytest.raises(InvalidInput, match=r"rows\.zip: not a readable zip file"):
        extract_zip(not_zip, tmp_path / "out3", "rows.zip", SourceLimits())
