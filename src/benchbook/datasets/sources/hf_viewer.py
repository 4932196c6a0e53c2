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

Everything is read at one **pinned revision**: the commit asked for (``revision``, resolved to
its sha), else the commit the viewer computed its rows at (``X-Revision``), else ``main``'s.
A viewer serving another commit than an explicitly requested one raises ``RevisionUnavailable``
(the caller reads the raw files at that commit); the Parquet export is used only when its
``X-Revision`` is the pinned commit.

When the viewer fails in the middle of a split — truncated cells, ``TooBigContentError``, a 5xx
after the retries, a page stopping short of ``num_rows_total``, rows out of sequence — the rest
of the split is read from the Parquet export and, failing that, from the raw files at the pinned
commit (``files``), skipping the rows already read. Each switch is appended to ``notes`` (the
import reports them in its progress and result) and logged; when every path fails the error
names each failure.

Values keep the types the viewer gives them: a ClassLabel cell is its integer index (the label
names are in ``class_labels``), lists and structs stay JSON lists and objects.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import unquote

import httpx

from benchbook.contracts import SourceRef
from benchbook.datasets.sources.base import Row, RowSource
from benchbook.datasets.sources.files import FileSource
from benchbook.datasets.sources.hf_hub import HfHub, RepoInfo, ViewerUnavailable, repo_info
from benchbook.errors import BenchbookError, NotFound, UpstreamError

PAGE_LENGTH = 100
PARQUET_MIN_ROWS = 20_000
log = logging.getLogger(__name__)

#: Opens the raw files of the split at a commit sha (``hf_files.HfFileSource``).
FilesAt = Callable[[str], RowSource]


class RevisionUnavailable(ViewerUnavailable):
    """The viewer serves another commit than the one explicitly asked for."""


class HfViewerSource:
    """A ``RowSource`` over the viewer's ``/rows`` pages (or its Parquet export), falling back
    to the Parquet export and then the raw files at the same commit when the viewer fails.

    Opening probes the Hub and the viewer and fetches the first page, so ``total`` and ``ref``
    are known before iteration and every access error surfaces here.

    Args:
        hub: endpoints and token.
        dataset: ``owner/name``. config, split: as listed by ``/splits``.
        parquet_min_rows: read splits at least this long from the Parquet export when it exists.
        revision: the branch, tag or sha asked for (None: whatever the viewer serves).
        files: opens the split's raw files at a commit sha, the last fallback (None: none).

    Attributes:
        ref: ``SourceRef(kind="huggingface", dataset, config, split, revision=<commit sha>)``.
        total: ``num_rows_total``. features: ``{column: feature dict}`` as the viewer gives it.
        class_labels: ``{column: [label names]}`` for ClassLabel columns.
        notes: the paths switched to and why, in order (empty when the viewer served it all).

    Raises:
        NotFound: unknown dataset, revision, config or split. UpstreamError: unreachable, gated,
            refused. InvalidInput: the dataset needs a loading script.
        ViewerUnavailable: the viewer does not serve this dataset (read its files instead).
        RevisionUnavailable: the viewer serves another commit than ``revision``.
    """

    def __init__(
        self,
        hub: HfHub,
        dataset: str,
        config: str,
        split: str,
        parquet_min_rows: int = PARQUET_MIN_ROWS,
        revision: str | None = None,
        files: FilesAt | None = None,
    ) -> None:
        self.hub, self.dataset, self.config, self.split = hub, dataset, config, split
        self.parquet_min_rows = parquet_min_rows
        self.explicit = revision is not None
        self.files = files
        self.notes: list[str] = []
        with hub.client() as client:
            self.info: RepoInfo = repo_info(hub, client, dataset, revision or "main")
            self._check_valid(client)
            self._first, headers = self._page(client, 0)
        served = headers.get("X-Revision") or None
        if revision is not None and served is not None and served != self.info.sha:
            raise RevisionUnavailable(
                f"the dataset viewer serves {dataset} at commit {served[:12]}, not at the "
                f"requested revision {revision} ({self.info.sha[:12]})",
                {"dataset": dataset, "revision": self.info.sha, "viewer_revision": served},
            )
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
        self.revision: str = served or self.info.sha
        self.ref = SourceRef(
            kind="huggingface", dataset=dataset, config=config, split=split, revision=self.revision
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

    def _note(self, text: str) -> None:
        self.notes.append(text)
        log.warning("%s %s/%s: %s", self.dataset, self.config, self.split, text)

    def rows(self) -> Iterator[tuple[int, Row]]:
        """Yield ``(row_idx + 1, row)`` for every row of the split, in order."""
        assert self.total is not None
        if self.total >= self.parquet_min_rows:
            shards = self._parquet_sources()
            if isinstance(shards, list):
                yield from self._parquet_rows(shards, 0)
                return
        done = 0
        try:
            for number, row in self._viewer_rows():
                yield number, row
                done = number
            return
        except UpstreamError as exc:
            reason = exc.message
        yield from self._fallback(done, reason)

    def _viewer_rows(self) -> Iterator[tuple[int, Row]]:
        assert self.total is not None
        offset = 0
        page: dict[str, Any] | None = self._first
        with self.hub.client() as client:
            while offset < self.total:
                if page is None:
                    page, headers = self._page(client, offset)
                    served = headers.get("X-Revision")
                    if served and served != self.revision:
                        raise UpstreamError(
                            f"the viewer moved to commit {served[:12]} while {self.dataset} "
                            "was read"
                        )
                self._check_page(page, offset)
                items, page = page["rows"], None
                for item in items[: self.total - offset]:
                    if item.get("row_idx") != offset:
                        raise UpstreamError(
                            f"the viewer returned row {item.get('row_idx')} of {self.dataset} "
                            f"where row {offset} was expected",
                        )
                    if item.get("truncated_cells"):
                        raise UpstreamError(
                            f"the viewer truncated cells of {self.dataset} "
                            f"{self.config}/{self.split} at row {offset + 1}"
                        )
                    yield offset + 1, item["row"]
                    offset += 1

    def _check_page(self, page: dict[str, Any], offset: int) -> None:
        if page.get("num_rows_total") != self.total:
            raise UpstreamError(
                f"{self.dataset} changed while it was read: {page.get('num_rows_total')} rows "
                f"instead of {self.total}",
            )
        if not page["rows"]:
            raise UpstreamError(
                f"the viewer returned no rows at offset {offset} of {self.total} for "
                f"{self.dataset} {self.config}/{self.split}",
                {"offset": offset, "total": self.total},
            )

    def _fallback(self, start: int, reason: str) -> Iterator[tuple[int, Row]]:
        """Rows ``start…total-1`` from the Parquet export, else the raw files, at the pinned
        commit; UpstreamError naming every failure when neither serves them."""
        at = f"commit {self.revision[:12]}"
        failures = [reason]
        self._note(
            f"the dataset viewer failed at row {start + 1} of {self.total} ({reason}); "
            f"reading the rest from the Parquet export at {at}"
        )
        shards = self._parquet_sources()
        if isinstance(shards, list):
            yield from self._parquet_rows(shards, start)
            return
        failures.append(f"the Parquet export: {shards}")
        if self.files is None:
            failures.append("the raw files: not tried")
        else:
            self._note(
                f"the Parquet export cannot serve it ({shards}); reading the raw files at {at}"
            )
            try:
                source = self.files(self.revision)
            except BenchbookError as exc:
                failures.append(f"the raw files: {exc.message}")
            else:
                if source.total is not None and source.total != self.total:
                    failures.append(
                        f"the raw files: {source.total} rows but the viewer counts {self.total}"
                    )
                else:
                    yield from self._raw_rows(source, start)
                    return
        raise UpstreamError(
            f"cannot read {self.dataset} {self.config}/{self.split} at {at} from row "
            f"{start + 1}: " + "; ".join(failures) + ". Name one of its data files "
            "(source.file) to import it from that file.",
            {"dataset": self.dataset, "row": start + 1, "revision": self.revision},
        )

    def _raw_rows(self, source: RowSource, start: int) -> Iterator[tuple[int, Row]]:
        index = 0
        for _, row in source.rows():
            if index >= start:
                yield index + 1, row
            index += 1
        if index != self.total:
            raise UpstreamError(
                f"the raw files of {self.dataset} {self.config}/{self.split} at commit "
                f"{self.revision[:12]} have {index} rows but the viewer counts {self.total}",
            )

    def _parquet_sources(self) -> list[FileSource] | str:
        """The split's export files at the pinned commit, downloaded, in shard order; or why
        they cannot be used."""
        try:
            with self.hub.client() as client:
                body, headers = self._get(
                    client, "parquet", dataset=self.dataset, config=self.config
                )
            exported = headers.get("X-Revision")
            if exported != self.revision and (exported or self.explicit):
                return f"it was made at commit {(exported or 'unknown')[:12]}"
            shards: list[tuple[str, str]] = []
            for item in body.get("parquet_files") or []:
                if item.get("config") != self.config or item.get("split") != self.split:
                    continue
                rev, _, path = str(item["url"]).partition("/resolve/")[2].partition("/")
                if path.split("/")[1:2] == [f"partial-{self.split}"]:
                    return "it is partial"  # a partial export would drop rows
                shards.append((unquote(rev), unquote(path)))
            if not shards:
                return "no complete Parquet export exists"
            gated = bool(self.info.gated)
            sources = [
                FileSource(
                    self.hub.download(self.dataset, path, rev, gated), format="parquet", name=path
                )
                for rev, path in sorted(shards, key=lambda shard: shard[1])
            ]
        except (UpstreamError, NotFound) as exc:
            return exc.message
        count = sum(source.total or 0 for source in sources)
        if count != self.total:
            return f"it has {count} rows but the viewer counts {self.total}"
        return sources

    def _parquet_rows(self, sources: list[FileSource], start: int) -> Iterator[tuple[int, Row]]:
        """Rows ``start…total-1`` from the downloaded export files."""
        index = 0
        for source in sources:
            for _, row in source.rows():
                if index >= start:
                    yield index + 1, row
                index += 1
