"""Hugging Face sources against the local server speaking the Hub and viewer protocols."""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import io
import json
import socket
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from benchbook.contracts import Mapping, Recipe
from benchbook.contracts.imports import ImportProgress, ImportRequest
from benchbook.contracts.recipe import RecipeSource
from benchbook.datasets.sources.files import FileSource
from benchbook.datasets.sources.hf_files import HfFileSource, open_huggingface_source
from benchbook.datasets.sources.hf_hub import HfHub
from benchbook.datasets.sources.hf_search import (
    list_hf_files,
    list_hf_splits,
    search_hf_datasets,
)
from benchbook.datasets.sources.hf_viewer import HfViewerSource
from benchbook.errors import InvalidInput, NotFound, UpstreamError
from benchbook.services.context import Context, local_admin_context
from benchbook.services.datasets import export_dataset, list_dataset_versions, list_datasets
from benchbook.services.imports import import_benchmark
from benchbook.services.secrets import set_secret
from benchbook.settings import Settings
from tests.hfserver import GATED_ID, GATED_TOKEN, GSM8K_ID, PAGED_ID, FakeDataset, HfServer
from tests.hfserver.catalog import PAGED_FEATURES, paged_rows, viewerless
from tests.hfserver.model import fake_sha


@pytest.fixture
def hub(hf_server: HfServer, tmp_path: Path) -> HfHub:
    settings = Settings(HF_ENDPOINT=hf_server.url, hf_viewer_endpoint=hf_server.viewer_url)
    return dataclasses.replace(
        HfHub.from_settings(settings, cache_dir=tmp_path / "hf-cache"), backoff_s=0.001
    )


def rows_offsets(server: HfServer) -> list[int]:
    return [int(r.query["offset"]) for r in server.calls("/viewer/rows")]


def test_hub_endpoints_come_from_settings(hub: HfHub, hf_server: HfServer) -> None:
    assert hub.endpoint == hf_server.url
    assert hub.viewer_endpoint == hf_server.viewer_url


def test_gsm8k_through_the_viewer_yields_the_file_rows_in_order(
    hub: HfHub, hf_server: HfServer, shared_data: Path
) -> None:
    source = HfViewerSource(hub, GSM8K_ID, "main", "test")
    got = list(source.rows())
    expected = [row for _, row in FileSource(shared_data / "gsm8k" / "test.jsonl").rows()]
    assert source.total == 1319
    assert [row for _, row in got] == expected
    assert [n for n, _ in got] == list(range(1, 1320))
    assert rows_offsets(hf_server) == list(range(0, 1319, 100))
    assert all(int(r.query["length"]) <= 100 for r in hf_server.calls("/viewer/rows"))


def test_the_resolved_commit_sha_is_recorded(hub: HfHub, hf_server: HfServer) -> None:
    source = HfViewerSource(hub, GSM8K_ID, "main", "test")
    ref = source.ref
    assert (ref.kind, ref.dataset, ref.config, ref.split) == (
        "huggingface",
        GSM8K_ID,
        "main",
        "test",
    )
    assert ref.revision == hf_server.datasets[GSM8K_ID].sha
    assert len(ref.revision or "") == 40


def test_a_short_page_in_the_middle_does_not_end_the_stream(
    hub: HfHub, hf_server: HfServer
) -> None:
    rows = [row for _, row in HfViewerSource(hub, PAGED_ID, "default", "train").rows()]
    assert [r["id"] for r in rows] == list(range(100, 350))
    assert rows_offsets(hf_server) == [0, 100, 160]


def test_classlabel_and_nested_features_keep_their_values(hub: HfHub) -> None:
    source = HfViewerSource(hub, PAGED_ID, "default", "train")
    assert [row for _, row in source.rows()] == paged_rows(250)
    assert source.class_labels == {"label": ["easy", "medium", "hard"]}
    assert source.features["meta"] == PAGED_FEATURES["meta"]


def test_429_and_503_answers_are_retried(hub: HfHub, hf_server: HfServer) -> None:
    hf_server.datasets[PAGED_ID].faults = [429, 503]
    rows = list(HfViewerSource(hub, PAGED_ID, "default", "train").rows())
    assert len(rows) == 250
    assert rows_offsets(hf_server) == [0, 0, 0, 100, 160]


def test_retries_are_bounded(hub: HfHub, hf_server: HfServer) -> None:
    hf_server.datasets[PAGED_ID].faults = [503] * 10
    with pytest.raises(UpstreamError, match="HTTP 503") as err:
        HfViewerSource(dataclasses.replace(hub, max_attempts=3), PAGED_ID, "default", "train")
    assert "after 3 attempt(s)" in err.value.message
    assert len(hf_server.calls("/viewer/rows")) == 3


def long_rows(count: int, long_at: set[int]) -> list[dict[str, Any]]:
    return [
        {
            "id": i,
            "text": ("x" * 500 + f" row {i}") if i in long_at else f"short {i}",
            "items": list(range(60)) if i in long_at else [],
        }
        for i in range(count)
    ]


def test_truncated_cells_are_read_in_full_from_the_parquet_export(
    hub: HfHub, hf_server: HfServer
) -> None:
    expected = long_rows(250, {150, 151, 240})
    hf_server.add(
        FakeDataset("example-org/wide", {("default", "test"): expected}, truncate_over=100)
    )
    rows = list(HfViewerSource(hub, "example-org/wide", "default", "test").rows())
    assert [row for _, row in rows] == expected
    assert [n for n, _ in rows] == list(range(1, 251))
    assert rows_offsets(hf_server) == [0, 100]
    assert hf_server.calls("/resolve/refs/convert/parquet/default/test/0000.parquet")


def test_truncated_cells_without_a_parquet_export_fail_rather_than_import_truncated(
    hub: HfHub, hf_server: HfServer
) -> None:
    hf_server.add(
        FakeDataset(
            "example-org/wide",
            {("default", "test"): long_rows(20, {5})},
            truncate_over=100,
            parquet=False,
        )
    )
    source = HfViewerSource(hub, "example-org/wide", "default", "test")
    got: list[int] = []
    with pytest.raises(UpstreamError, match=r"truncated cells .* at row 6"):
        for _, row in source.rows():
            got.append(row["id"])
    assert got == [0, 1, 2, 3, 4]


def test_a_large_split_is_read_from_the_parquet_export(
    hub: HfHub, hf_server: HfServer, shared_data: Path
) -> None:
    source = HfViewerSource(hub, GSM8K_ID, "main", "test", parquet_min_rows=1000)
    rows = [row for _, row in source.rows()]
    expected = [row for _, row in FileSource(shared_data / "gsm8k" / "test.jsonl").rows()]
    assert rows == expected
    assert rows_offsets(hf_server) == [0]


def test_a_gated_dataset_without_a_token_fails_with_the_actionable_message(hub: HfHub) -> None:
    with pytest.raises(UpstreamError) as err:
        HfViewerSource(hub, GATED_ID, "default", "validation")
    message = err.value.message
    assert "may be gated" in message
    assert f"{hub.endpoint}/datasets/{GATED_ID}" in message
    assert "Accept its terms" in message
    assert "HF_TOKEN secret" in message
    assert "scope 'user'" in message and "scope 'workspace'" in message
    assert err.value.details["token_sent"] is False


def test_a_gated_dataset_with_a_token_not_granted_fails_as_gated(hub: HfHub) -> None:
    with pytest.raises(UpstreamError, match=r"with the token given.*may be gated"):
        HfViewerSource(
            dataclasses.replace(hub, token="hf_other"), GATED_ID, "default", "validation"
        )


def test_a_gated_dataset_with_the_granted_token_yields_rows(
    hub: HfHub, hf_server: HfServer
) -> None:
    source = HfViewerSource(
        dataclasses.replace(hub, token=GATED_TOKEN), GATED_ID, "default", "validation"
    )
    assert [row["task_id"] for _, row in source.rows()] == [f"t{i}" for i in range(5)]
    assert {r.authorization for r in hf_server.requests} == {f"Bearer {GATED_TOKEN}"}


@pytest.mark.parametrize(("token", "status"), [(None, 401), ("hf_other", 403)])
def test_a_gated_raw_file_is_refused_with_the_actionable_message(
    hub: HfHub, token: str | None, status: int
) -> None:
    with pytest.raises(UpstreamError, match="may be gated") as err:
        HfFileSource(dataclasses.replace(hub, token=token), GATED_ID, file="data/validation.csv")
    assert err.value.details["status"] == status


def test_a_gated_raw_file_downloads_with_the_granted_token(hub: HfHub) -> None:
    source = HfFileSource(
        dataclasses.replace(hub, token=GATED_TOKEN), GATED_ID, file="data/validation.csv"
    )
    assert [row["Final answer"] for _, row in source.rows()] == ["0", "1", "2", "3", "4"]


@pytest.mark.parametrize("token", [None, "hf_any"])
def test_an_unknown_dataset_is_not_found(hub: HfHub, token: str | None) -> None:
    with pytest.raises(NotFound, match="example-org/nope"):
        HfViewerSource(dataclasses.replace(hub, token=token), "example-org/nope", "a", "b")


def test_an_unknown_split_is_not_found_and_lists_the_known_ones(hub: HfHub) -> None:
    with pytest.raises(NotFound, match="available: main/test"):
        HfViewerSource(hub, GSM8K_ID, "main", "validation")


def test_an_unknown_revision_is_not_found(hub: HfHub) -> None:
    with pytest.raises(NotFound):
        HfFileSource(hub, GSM8K_ID, revision="v9.9", file="README.md")


def test_an_unreachable_hub_is_an_upstream_error(hub: HfHub) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    dead = dataclasses.replace(hub, endpoint=f"http://127.0.0.1:{port}", max_attempts=2)
    with pytest.raises(UpstreamError, match=r"^cannot reach Hugging Face \("):
        HfViewerSource(dead, GSM8K_ID, "main", "test")


def test_a_dataset_with_a_loading_script_is_a_clear_invalid_input(
    hub: HfHub, hf_server: HfServer
) -> None:
    hf_server.add(
        FakeDataset(
            "example-org/scripted", files={"scripted.py": b"import datasets\n"}, script=True
        )
    )
    spec = RecipeSource(
        kind="huggingface", dataset="example-org/scripted", config="default", split="test"
    )
    with pytest.raises(InvalidInput, match="loading script"):
        open_huggingface_source(hub, spec)


def quirky_rows() -> list[dict[str, str]]:
    return [
        {"id": "q1", "question": "first line\nsecond line", "answer": 'say "yes", then stop'},
        {"id": "q2", "question": "Málaga → Köln, 3 days", "answer": ""},
        {"id": "q3", "question": "tabs\tand\r\nCRLF inside", "answer": "1,000"},
    ]


def quirky_csv(rows: list[dict[str, str]]) -> bytes:
    out = io.StringIO(newline="")
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), quoting=csv.QUOTE_MINIMAL)
    writer.writeheader()
    writer.writerows(rows)
    return "\ufeff".encode() + out.getvalue().encode()


def test_a_dataset_the_viewer_does_not_serve_is_read_from_its_raw_csv(
    hub: HfHub, hf_server: HfServer
) -> None:
    body = quirky_csv(quirky_rows())
    assert body.startswith(b"\xef\xbb\xbf") and b'""yes""' in body
    train = quirky_csv([{"id": "t", "question": "train", "answer": "x"}])
    hf_server.tree_page_size = 2  # the listing spans several Link-paged responses
    ds = hf_server.add(
        viewerless("example-org/raw-csv", {"data/train.csv": train, "data/test.csv": body})
    )
    spec = RecipeSource(kind="huggingface", dataset="example-org/raw-csv", split="test")
    source = open_huggingface_source(hub, spec)
    assert isinstance(source, HfFileSource)
    assert [row for _, row in source.rows()] == quirky_rows()
    assert source.ref.file == "data/test.csv"
    assert source.ref.revision == ds.sha
    assert source.ref.sha256 == hashlib.sha256(body).hexdigest()
    assert len(hf_server.calls(f"/tree/{ds.sha}")) > 1


def test_the_viewer_is_used_when_it_serves_the_split(hub: HfHub) -> None:
    spec = RecipeSource(kind="huggingface", dataset=GSM8K_ID, config="main", split="test")
    source = open_huggingface_source(hub, spec)
    assert isinstance(source, HfViewerSource)
    assert source.total == 1319


def test_an_ambiguous_split_asks_for_a_choice(hub: HfHub) -> None:
    spec = RecipeSource(kind="huggingface", dataset=PAGED_ID)
    with pytest.raises(InvalidInput, match="default/train, default/test"):
        open_huggingface_source(hub, spec)


def test_search_finds_datasets_by_name(hub: HfHub) -> None:
    hits = search_hf_datasets(hub, "gsm8k")
    assert [h.id for h in hits] == [GSM8K_ID]
    gated = search_hf_datasets(hub, "gated")
    assert gated[0].gated == "auto"


def test_configs_and_splits_are_listed(hub: HfHub) -> None:
    splits = list_hf_splits(hub, PAGED_ID)
    assert [(s.config, s.split) for s in splits] == [("default", "train"), ("default", "test")]


def test_files_are_listed_root_first_then_by_path(hub: HfHub, hf_server: HfServer) -> None:
    files = {"b/z.jsonl": b"{}\n", "README.md": b"#", "a/x.csv": b"a\n1\n", "top.parquet": b""}
    ds = hf_server.add(viewerless("example-org/layout", files))
    listing = list_hf_files(hub, "example-org/layout")
    assert listing.revision == ds.sha
    assert [f.path for f in listing.files] == ["README.md", "top.parquet", "a/x.csv", "b/z.jsonl"]
    assert [f.format for f in listing.files] == [None, "parquet", "csv", "jsonl"]


@pytest.fixture
def hf_ctx(engine: Engine, settings: Settings, hf_server: HfServer) -> Context:
    """The local admin, with settings pointing at the fake Hub and viewer."""
    update = {"hf_endpoint": hf_server.url, "hf_viewer_endpoint": hf_server.viewer_url}
    return local_admin_context(engine, settings.model_copy(update=update))


def test_gsm8k_imported_from_the_hub_matches_the_file_import_byte_for_byte(
    hf_ctx: Context, hf_server: HfServer, shared_data: Path
) -> None:
    gsm8k_file = shared_data / "gsm8k" / "test.jsonl"
    by_file = import_benchmark(
        hf_ctx, ImportRequest(benchmark="gsm8k", version="1.0.0"), file=gsm8k_file
    )
    by_hub = import_benchmark(hf_ctx, ImportRequest(benchmark="gsm8k", version="2.0.0"))
    assert by_file.cases == by_hub.cases == 1319
    from_file = b"".join(export_dataset(hf_ctx, "gsm8k", "1.0.0"))
    from_hub = b"".join(export_dataset(hf_ctx, "gsm8k", "2.0.0"))
    assert from_hub.count(b"\n") == 1319
    assert from_hub == from_file
    versions = {v.version: v for v in list_dataset_versions(hf_ctx, "gsm8k")}
    produced = versions["2.0.0"].produced_by
    assert produced is not None and produced.source is not None
    source = produced.source
    assert (source.kind, source.dataset, source.config, source.split) == (
        "huggingface",
        GSM8K_ID,
        "main",
        "test",
    )
    assert source.revision == hf_server.datasets[GSM8K_ID].sha


def gated_request() -> ImportRequest:
    source = RecipeSource(
        kind="huggingface", dataset=GATED_ID, config="default", split="validation", gated=True
    )
    mapping = Mapping(id_field="task_id", task_field="Question", answer_field="Final answer")
    return ImportRequest(spec=Recipe(id="gated-bench", source=source, mapping=mapping))


@pytest.mark.parametrize(
    ("user", "workspace", "works"),
    [
        (None, None, False),
        (GATED_TOKEN, None, True),
        (None, GATED_TOKEN, True),
        (GATED_TOKEN, "hf_not_granted", True),
        ("hf_not_granted", GATED_TOKEN, False),
    ],
)
def test_a_gated_import_uses_the_requesters_secret_before_the_workspaces(
    hf_ctx: Context, user: str | None, workspace: str | None, works: bool
) -> None:
    if user is not None:
        set_secret(hf_ctx, "HF_TOKEN", user, scope="user")
    if workspace is not None:
        set_secret(hf_ctx, "HF_TOKEN", workspace, scope="workspace")
    if works:
        assert import_benchmark(hf_ctx, gated_request()).cases == 5
        return
    with pytest.raises(UpstreamError, match="Accept its terms"):
        import_benchmark(hf_ctx, gated_request())
    assert list_datasets(hf_ctx).items == []


def test_a_picked_file_is_parsed_by_its_extension_not_the_recipe_format(
    hub: HfHub, hf_server: HfServer
) -> None:
    hf_server.add(viewerless("example-org/jsonl", {"data/test.jsonl": b'{"q": 1}\n{"q": 2}\n'}))
    spec = RecipeSource(kind="huggingface", dataset="example-org/jsonl", split="test", format="csv")
    assert [row for _, row in open_huggingface_source(hub, spec).rows()] == [{"q": 1}, {"q": 2}]


def test_a_revision_other_than_the_latest_reads_the_raw_files_at_that_commit(
    hub: HfHub, hf_server: HfServer
) -> None:
    ds = hf_server.datasets[GATED_ID]
    spec = RecipeSource(kind="huggingface", dataset=GATED_ID, revision=ds.sha, split="validation")
    source = open_huggingface_source(dataclasses.replace(hub, token=GATED_TOKEN), spec)
    assert isinstance(source, HfViewerSource)  # the sha is main's: the viewer serves it
    with pytest.raises(NotFound):
        open_huggingface_source(hub, spec.model_copy(update={"revision": "0" * 40}))


# --- Issue 8 item 10: a viewer failure mid-split falls back at the same pinned revision ---

FAILURES = ["TooBigContentError", "5xx", "short"]
FALLBACK_ID = "example-org/fallback"


def jsonl(rows: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(row).encode() + b"\n" for row in rows)


def fallback_dataset(parquet: bool, rows: list[dict[str, Any]] | None = None) -> FakeDataset:
    """250 paged rows served by the viewer, the export (or not) and as a raw JSONL file."""
    rows = rows if rows is not None else paged_rows(250)
    return FakeDataset(
        FALLBACK_ID,
        splits={("default", "train"): rows},
        features={"default": PAGED_FEATURES},
        files={"README.md": b"# fallback\n", "data/train.jsonl": jsonl(rows)},
        parquet=parquet,
    )


def fallback_request(bump: str | None = None, revision: str | None = None) -> ImportRequest:
    source = RecipeSource(
        kind="huggingface", dataset=FALLBACK_ID, config="default", split="train", revision=revision
    )
    mapping = Mapping(id_field="id", task_field="question", answer_field="answer")
    recipe = Recipe(id="fallback", source=source, mapping=mapping)
    return ImportRequest(spec=recipe, bump=bump) if bump else ImportRequest(spec=recipe)


@pytest.mark.parametrize("parquet", [True, False], ids=["parquet", "raw-files"])
@pytest.mark.parametrize("failure", FAILURES)
def test_a_viewer_failure_mid_split_falls_back_and_reads_the_same_rows(
    hub: HfHub, hf_server: HfServer, failure: str, parquet: bool
) -> None:
    ds = hf_server.add(fallback_dataset(parquet))
    ds.rows_fail_from, ds.rows_failure = 100, failure
    source = HfViewerSource(
        dataclasses.replace(hub, max_attempts=2), FALLBACK_ID, "default", "train"
    )
    got: list[tuple[int, dict[str, Any]]] = []
    if parquet:
        got = list(source.rows())
    else:
        spec = RecipeSource(
            kind="huggingface", dataset=FALLBACK_ID, config="default", split="train"
        )
        source = open_huggingface_source(dataclasses.replace(hub, max_attempts=2), spec)
        assert isinstance(source, HfViewerSource)
        got = list(source.rows())
    assert got == list(enumerate(paged_rows(250), start=1))
    assert source.ref.revision == ds.sha
    assert rows_offsets(hf_server)[0] == 0 and max(rows_offsets(hf_server)) == 100
    used = "/resolve/refs/convert/parquet/" if parquet else f"/resolve/{ds.sha}/data/train.jsonl"
    assert [r for r in hf_server.requests if used in r.path]
    notes = " ".join(source.notes)
    assert "row 101" in notes and ("Parquet export" if parquet else "raw files") in notes
    assert ds.sha[:12] in notes


@pytest.mark.parametrize("failure", FAILURES)
def test_a_lagging_viewer_failing_mid_split_falls_back_to_its_own_commit_not_main(
    hub: HfHub, hf_server: HfServer, failure: str
) -> None:
    old = paged_rows(250)
    new = [{**row, "answer": row["answer"] + "!"} for row in old]
    ds = hf_server.add(fallback_dataset(parquet=False, rows=old))
    old_sha = fake_sha("old commit")
    ds.history = {old_sha: dict(ds.files)}
    ds.files = {"README.md": b"# fallback\n", "data/train.jsonl": jsonl(new)}
    ds.viewer_sha = old_sha  # the viewer has not caught up with main yet
    ds.rows_fail_from, ds.rows_failure = 200, failure
    spec = RecipeSource(kind="huggingface", dataset=FALLBACK_ID, config="default", split="train")
    source = open_huggingface_source(dataclasses.replace(hub, max_attempts=2), spec)
    assert [row for _, row in source.rows()] == old
    assert source.ref.revision == old_sha
    assert not hf_server.calls(f"/resolve/{ds.sha}/data/train.jsonl")


def test_every_path_failing_names_each_failure(hub: HfHub, hf_server: HfServer) -> None:
    ds = hf_server.add(fallback_dataset(parquet=False))
    ds.files = {"README.md": b"# nothing else\n"}
    ds.rows_fail_from, ds.rows_failure = 100, "TooBigContentError"
    spec = RecipeSource(kind="huggingface", dataset=FALLBACK_ID, config="default", split="train")
    source = open_huggingface_source(hub, spec)
    with pytest.raises(UpstreamError, match=r"too big .*Parquet export.*no data file") as err:
        list(source.rows())
    assert "row 101" in err.value.message


def test_an_explicit_older_revision_is_read_at_that_commit_not_main(
    hub: HfHub, hf_server: HfServer
) -> None:
    old = paged_rows(250)
    new = [{**row, "answer": row["answer"] + "!"} for row in old]
    ds = hf_server.add(fallback_dataset(parquet=True, rows=new))
    old_sha = fake_sha("old commit")
    ds.history = {old_sha: {"data/train.jsonl": jsonl(old)}}
    spec = RecipeSource(
        kind="huggingface", dataset=FALLBACK_ID, config="default", split="train", revision=old_sha
    )
    source = open_huggingface_source(hub, spec)
    assert [row for _, row in source.rows()] == old
    assert source.ref.revision == old_sha
    assert not hf_server.calls("/resolve/refs/convert/parquet/default/train/0000.parquet")
    assert not hf_server.calls(f"/resolve/{ds.sha}/data/train.jsonl")


def test_an_explicit_main_sha_is_not_read_from_a_viewer_serving_an_older_commit(
    hub: HfHub, hf_server: HfServer
) -> None:
    old = paged_rows(250)
    new = [{**row, "answer": row["answer"] + "!"} for row in old]
    ds = hf_server.add(fallback_dataset(parquet=True, rows=old))
    old_sha = fake_sha("old commit")
    ds.history = {old_sha: dict(ds.files)}
    ds.files = {"README.md": b"# fallback\n", "data/train.jsonl": jsonl(new)}
    ds.viewer_sha = old_sha
    for revision in (ds.sha, "main"):
        spec = RecipeSource(
            kind="huggingface",
            dataset=FALLBACK_ID,
            config="default",
            split="train",
            revision=revision,
        )
        source = open_huggingface_source(hub, spec)
        assert [row for _, row in source.rows()] == new
        assert source.ref.revision == ds.sha
        assert any("raw files" in note for note in source.notes)


@pytest.mark.parametrize("parquet", [True, False], ids=["parquet", "raw-files"])
@pytest.mark.parametrize("failure", FAILURES)
def test_an_import_surviving_the_viewer_equals_a_clean_import(
    hf_ctx: Context, hf_server: HfServer, failure: str, parquet: bool
) -> None:
    ds = hf_server.add(fallback_dataset(parquet))
    clean = import_benchmark(hf_ctx, fallback_request())
    assert clean.cases == 250 and clean.notes == []
    ds.rows_fail_from, ds.rows_failure = 100, failure
    progress: list[ImportProgress] = []
    again = import_benchmark(hf_ctx, fallback_request(bump="minor"), progress=progress.append)
    assert again.identical_to == clean.version == "1.0.0"  # same cases and same produced_by
    assert not again.created
    versions = {v.version: v for v in list_dataset_versions(hf_ctx, "fallback")}
    produced = versions["1.0.0"].produced_by
    assert produced is not None and produced.source is not None
    assert produced.source.revision == ds.sha
    assert any("row 101" in note for note in again.notes)
    assert progress and progress[-1].notes == again.notes


def test_an_import_of_an_explicit_older_revision_records_that_commit(
    hf_ctx: Context, hf_server: HfServer
) -> None:
    old = paged_rows(250)
    ds = hf_server.add(fallback_dataset(parquet=True, rows=[{**r, "answer": "new"} for r in old]))
    old_sha = fake_sha("old commit")
    ds.history = {old_sha: {"data/train.jsonl": jsonl(old)}}
    result = import_benchmark(hf_ctx, fallback_request(revision=old_sha))
    assert result.cases == 250
    versions = {v.version: v for v in list_dataset_versions(hf_ctx, "fallback")}
    produced = versions[result.version].produced_by
    assert produced is not None and produced.source is not None
    assert produced.source.revision == old_sha
    exported = b"".join(export_dataset(hf_ctx, "fallback", result.version))
    assert exported.count(b"\n") == 250 and b'"new"' not in exported
