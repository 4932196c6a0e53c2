"""What the fake Hugging Face server serves: datasets, their rows, files and injected faults.

A ``FakeDataset`` describes one repository as both the Hub and the dataset viewer see it. The
knobs mirror real states documented in ``../shared/data/hf-api-shapes.md``: gated repos (401
without a token, 403 / viewer 404 with a token that was not granted access), viewer-disabled
repos (``/is-valid`` all false, raw files only), script-based repos (viewer 501
``DatasetWithScriptNotSupportedError``), short ``/rows`` pages, transient 429/5xx answers and
truncated cells.
"""

from __future__ import annotations

import hashlib
import io
import threading
from dataclasses import dataclass, field
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

PARQUET_REVISION = "refs/convert/parquet"


def fake_sha(text: str) -> str:
    """A stable 40-hex commit sha derived from ``text``."""
    return hashlib.sha1(text.encode()).hexdigest()


def infer_feature(value: Any) -> dict[str, Any]:
    """The ``datasets`` feature dict (``{"dtype": ..., "_type": "Value"}`` …) of a JSON value."""
    if isinstance(value, bool):
        return {"dtype": "bool", "_type": "Value"}
    if isinstance(value, int):
        return {"dtype": "int64", "_type": "Value"}
    if isinstance(value, float):
        return {"dtype": "float64", "_type": "Value"}
    if isinstance(value, list):
        inner = infer_feature(value[0]) if value else {"dtype": "string", "_type": "Value"}
        return {"feature": inner, "_type": "List"}
    if isinstance(value, dict):
        return {k: infer_feature(v) for k, v in value.items()}
    return {"dtype": "string", "_type": "Value"}


@dataclass
class FakeDataset:
    """One Hub dataset repository.

    Attributes:
        repo_id: ``owner/name``.
        splits: ``{(config, split): rows}``, rows in order; served by the viewer.
        features: ``{config: {column: feature dict}}``; inferred from the first row when absent.
        files: raw repository files ``{path: bytes}`` served by ``tree`` and ``resolve``.
        gated: ``"auto"``/``"manual"`` or False; gated data needs ``Authorization: Bearer <token>``.
        token: the one token granted access to a gated dataset.
        viewer: False makes ``/is-valid`` all false and every other viewer route answer 501.
        script: the repo has a loading script: the viewer answers 501
            ``DatasetWithScriptNotSupportedError``.
        page_size: most rows one ``/rows`` page returns (the server constant is 100).
        short_pages: ``{offset: n}`` — the page requested at ``offset`` returns only ``n`` rows.
        faults: statuses (429, 500, 503 …) answered once each, in order, by the next ``/rows``
            calls.
        truncate_over: cells whose JSON is longer than this many characters are truncated in
            ``/rows`` and ``/first-rows`` (a string prefix of the JSON, in ``truncated_cells``).
        parquet: whether the Parquet export (``refs/convert/parquet``) exists.
        sha: the commit ``main`` points at; ``files`` are its files.
        viewer_sha: the commit the viewer and its Parquet export were computed at (their
            ``X-Revision``); ``sha`` when empty. A viewer lagging behind ``main`` has an older one.
        history: older commits ``{sha: files}``, readable through ``tree`` and ``resolve`` (the
            viewer only ever serves ``viewer_sha``).
        rows_fail_from: ``/rows`` pages at this offset or later fail as ``rows_failure`` says,
            every time: ``"TooBigContentError"`` (500 with that code, never retried),
            ``"5xx"`` (500 ``UnexpectedError``, retried until the attempts run out) or
            ``"short"`` (a 200 page with no rows, stopping short of ``num_rows_total``).
    """

    repo_id: str
    splits: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)
    features: dict[str, dict[str, Any]] = field(default_factory=dict)
    files: dict[str, bytes] = field(default_factory=dict)
    gated: bool | str = False
    token: str | None = None
    viewer: bool = True
    script: bool = False
    page_size: int = 100
    short_pages: dict[int, int] = field(default_factory=dict)
    faults: list[int] = field(default_factory=list)
    truncate_over: int | None = None
    parquet: bool = True
    sha: str = ""
    viewer_sha: str = ""
    history: dict[str, dict[str, bytes]] = field(default_factory=dict)
    rows_fail_from: int | None = None
    rows_failure: str = "TooBigContentError"
    _parquet_cache: dict[tuple[str, str], bytes] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        if not self.sha:
            self.sha = fake_sha(self.repo_id)
        if not self.viewer_sha:
            self.viewer_sha = self.sha
        if self.gated is True:
            self.gated = "auto"

    @property
    def configs(self) -> list[str]:
        """Config names in first-seen order."""
        return list(dict.fromkeys(config for config, _ in self.splits))

    def config_features(self, config: str) -> dict[str, Any]:
        """The feature dict of ``config`` (given, else inferred from its first row)."""
        if config in self.features:
            return self.features[config]
        for (cfg, _), rows in self.splits.items():
            if cfg == config and rows:
                return {k: infer_feature(v) for k, v in rows[0].items()}
        return {}

    def take_fault(self) -> int | None:
        """Pop the next injected fault status, if any (thread-safe)."""
        with self._lock:
            return self.faults.pop(0) if self.faults else None

    def parquet_bytes(self, config: str, split: str) -> bytes:
        """The split's rows as one Parquet file (built once, cached)."""
        with self._lock:
            if (config, split) not in self._parquet_cache:
                table = pa.Table.from_pylist(self.splits[(config, split)])
                buf = io.BytesIO()
                pq.write_table(table, buf)
                self._parquet_cache[(config, split)] = buf.getvalue()
            return self._parquet_cache[(config, split)]

    def parquet_files(self) -> dict[str, bytes]:
        """The export's files ``{"<config>/<split>/0000.parquet": bytes}``."""
        if not self.parquet:
            return {}
        return {
            f"{config}/{split}/0000.parquet": self.parquet_bytes(config, split)
            for config, split in self.splits
        }

    def truncated(self, row: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """The row as the viewer returns it, with long cells cut, and the cut column names."""
        if self.truncate_over is None:
            return row, []
        out: dict[str, Any] = {}
        cut: list[str] = []
        for key, value in row.items():
            text = orjson.dumps(value).decode()
            if len(text) > self.truncate_over:
                out[key] = text[: self.truncate_over]
                cut.append(key)
            else:
                out[key] = value
        return out, cut
