"""Rows of one Hugging Face split through the dataset viewer (SPEC E.2).

Protocol (``https://datasets-server.huggingface.co``, shapes in ``docs/huggingface.md``):

1. ``GET {hub}/api/datasets/{id}/revision/main`` → the commit ``sha`` recorded in ``ref.revision``
   (the viewer's ``X-Revision`` header wins when present: it names the commit the rows came from)
   and whether the repo is gated.
2. ``GET /is-valid?dataset=`` → ``viewer: false`` means ``/rows`` cannot serve the split;
   ``/splits`` then tells a loading-script dataset (``InvalidInput``) from one to read as raw files
   (``ViewerUnavailable``).
3. ``GET /rows?dataset&config&split&offset&length`` with ``length ≤ 100``. The offset advances by
   the number of rows actually received, so a short page in the middle is followed by the next
   one; the stream stops at ``num_rows_total``. An empty page before that, a ``row_idx`` out of
   sequence or a changed total is an ``UpstreamError`` — rows are never capped silently.
4. The Parquet export (``GET /parquet?dataset&config``, files downloaded from the Hub ``resolve``
   route of ``refs/convert/parquet`` with ``huggingface_hub``, read with pyarrow) is used for
   splits of at least ``parquet_min_rows`` rows, and from the first row whose cells the viewer
   truncated (``truncated_cells`` non-empty) — truncated text is never imported.

Values keep the types the viewer gives them: a ClassLabel cell is its integer index (the label
names are in ``class_labels``), lists and structs stay JSON lists and objects.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote

import httpx

from benchbook.contracts import SourceRef
from benchbook.datasets.sources.base import Row
from benchbook.datasets.sources.files import FileSource
from benchbook.datasets.sources.hf_hub import HfHub, RepoInfo, ViewerUnavailable, repo_info
from benchbook.errors import NotFound, UpstreamError

PAGE_LENGTH = 100
PARQUET_MIN_ROWS = 20_000


class HfViewerSource:
    """A ``RowSource`` over the viewer's ``/rows`` pages (or its Parquet export).

    Opening probes the Hub and the viewer and fetches the first page, so ``total`` and ``ref``
    are known before iteration and every access error surfaces here.

    Args:
        hub: endpoints and token.
        dataset: ``owner/name``. config, split: as listed by ``/splits``.
        parquet_min_rows: read splits at least this long from the Parquet export when it exists.

    Attributes:
        ref: ``SourceRef(kind="huggingface", dataset, config, split, revision=<commit sha>)``.
        total: ``num_rows_total``. features: ``{column: feature dict}`` as the viewer gives it.
        class_labels: ``{column: [label names]}`` for ClassLabel columns.

    Raises:
        NotFound: unknown dataset, config or split. UpstreamError: unreachable, gated, refused.
        InvalidInput: the dataset needs a loading script.
        ViewerUnavailable: the viewer does not serve this dataset (read its files instead).
    """

    def __init__(
        self,
        hub: HfHub,
        dataset: str,
        config: str,
        split: str,
        parquet_min_rows: int = PARQUET_MIN_ROWS,
    ) -> None:
        self.hub, self.dataset, self.config, self.split = hub, dataset, config, split
        self.parquet_min_rows = parquet_min_rows
        with hub.client() as client:
            self.info: RepoInfo = repo_info(hub, client, dataset)
            self._check_valid(client)
            self._first, headers = self._page(client, 0)
        if self._first.get("partial"):
            raise ViewerUnavailable(
                f"the viewer converted only the first part of {dataset}; reading its files",
                {"dataset": dataset},
            )
        self.total: int | None = int(self._first["num_rows_total"])
        self.features = {f["name"]: f["type"] for f in self._first.get("features") or []}
        self.class_labels = {
            name: list(ftype.get("names") or [])
            for name, ftype in self.features.items()
            if isinstance(ftype, dict) and ftype.get("_type") == "ClassLabel"
        }
        revision = headers.get("X-Revision") or self.info.sha
        self.ref = SourceRef(
            kind="huggingface", dataset=dataset, config=config, split=split, revision=revision
        )

    def _get(self, client: httpx.Client, route: str, **params: Any) -> tuple[Any, httpx.Headers]:
        url = f"{self.hub.viewer_endpoint}/{route}"
        gated = bool(self.info.gated)
        return self.hub.get_json(client, url, self.dataset, params, gated)

    def _check_valid(self, client: httpx.Client) -> None:
        valid, _ = self._get(client, "is-valid", dataset=self.dataset)
        if isinstance(valid, dict) and valid.get("viewer"):
            return
        self._get(client, "splits", dataset=self.dataset)  # raises for a loading script
        raise ViewerUnavailable(
            f"the dataset viewer does not serve {self.dataset}", {"dataset": self.dataset}
        )

    def _page(self, client: httpx.Client, offset: int) -> tuple[dict[str, Any], httpx.Headers]:
        try:
            body, headers = self._get(
                client,
                "rows",
                dataset=self.dataset,
                config=self.config,
                split=self.split,
                offset=offset,
                length=PAGE_LENGTH,
            )
        except NotFound as exc:
            raise self._unknown_split(client) from exc
        if not isinstance(body, dict) or not isinstance(body.get("rows"), list):
            raise UpstreamError(f"the viewer's /rows answer for {self.dataset} has no rows list")
        return body, headers

    def _unknown_split(self, client: httpx.Client) -> NotFound:
        body, _ = self._get(client, "splits", dataset=self.dataset)
        known = [f"{s['config']}/{s['split']}" for s in body.get("splits") or []]
        return NotFound(
            f"{self.dataset} has no config/split {self.config}/{self.split}; "
            f"available: {', '.join(known) or 'none'}",
            {"dataset": self.dataset, "available": known},
        )

    def rows(self) -> Iterator[tuple[int, Row]]:
        """Yield ``(row_idx + 1, row)`` for every row of the split, in order."""
        assert self.total is not None
        if self.total >= self.parquet_min_rows and self._parquet_shards():
            yield from self._parquet_rows(0)
            return
        offset = 0
        page: dict[str, Any] | None = self._first
        with self.hub.client() as client:
            while offset < self.total:
                if page is None:
                    page, _ = self._page(client, offset)
                self._check_page(page, offset)
                items, page = page["rows"], None
                for item in items[: self.total - offset]:
                    if item.get("row_idx") != offset:
                        raise UpstreamError(
                            f"the viewer returned row {item.get('row_idx')} of {self.dataset} "
                            f"where row {offset} was expected",
                        )
                    if item.get("truncated_cells"):
                        yield from self._parquet_rows(offset)
                        return
                    yield offset + 1, item["row"]
                    offset += 1

    def _check_page(self, page: dict[str, Any], offset: int) -> None:
        if page.get("num_rows_total") != self.total:
            raise UpstreamError(
                f"{self.dataset} changed while it was read: {page.get('num_rows_total')} rows "
                f"instead of {self.total}; import it again",
            )
        if not page["rows"]:
            raise UpstreamError(
                f"the viewer returned no rows at offset {offset} of {self.total} for "
                f"{self.dataset} {self.config}/{self.split}; refusing to import a partial split",
                {"offset": offset, "total": self.total},
            )

    def _parquet_shards(self) -> list[tuple[str, str]]:
        """``[(revision, path)]`` of the split's export files, in shard order (may be empty)."""
        with self.hub.client() as client:
            body, _ = self._get(client, "parquet", dataset=self.dataset, config=self.config)
        shards = []
        for item in body.get("parquet_files") or []:
            if item.get("config") != self.config or item.get("split") != self.split:
                continue
            rev, _, path = str(item["url"]).partition("/resolve/")[2].partition("/")
            if path.split("/")[1:2] == [f"partial-{self.split}"]:
                return []  # a partial export would drop rows
            shards.append((unquote(rev), unquote(path)))
        return sorted(shards, key=lambda shard: shard[1])

    def _parquet_rows(self, start: int) -> Iterator[tuple[int, Row]]:
        """Rows ``start…total-1`` from the Parquet export; the whole count is checked."""
        shards = self._parquet_shards()
        if not shards:
            raise UpstreamError(
                f"the viewer truncated cells of {self.dataset} {self.config}/{self.split} at "
                f"row {start + 1} and no complete Parquet export exists; name one of its data "
                "files (source.file) to import full values",
                {"dataset": self.dataset, "row": start + 1},
            )
        index = 0
        for revision, path in shards:
            local = self.hub.download(self.dataset, path, revision, bool(self.info.gated))
            for _, row in FileSource(local, format="parquet", name=path).rows():
                if index >= start:
                    yield index + 1, row
                index += 1
        if index != self.total:
            raise UpstreamError(
                f"the Parquet export of {self.dataset} {self.config}/{self.split} has {index} "
                f"rows but the viewer counts {self.total}",
            )
