"""Raw Hub files as rows, for datasets the viewer does not serve (SPEC E.2), and the choice
between the viewer and the files.

``HfFileSource`` resolves the revision to its commit sha, lists the repository's files (root
first, then by path), picks the data file — the one named, else by extension (``.csv``,
``.jsonl``, ``.json``, ``.parquet``, each optionally ``.gz``), preferring files whose path names
the split — downloads it with ``huggingface_hub.hf_hub_download`` at that sha and hands parsing
to ``FileSource`` (``datasets/sources/files.py``). A file named like a shard
(``train-00000-of-00003.parquet``) brings its sibling shards, read in order.

``open_huggingface_source`` is what the importer calls: the viewer when it serves the split at
the requested revision (falling back to the Parquet export and these files at the same commit
when it fails mid-split), else the raw files at that revision.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import PurePosixPath

from benchbook.contracts import SourceRef
from benchbook.contracts.recipe import FileFormat, RecipeSource
from benchbook.datasets.sources.base import Row, RowSource
from benchbook.datasets.sources.files import FileSource
from benchbook.datasets.sources.hf_hub import HfHub, ViewerUnavailable, repo_info, script_error
from benchbook.datasets.sources.hf_search import HfFileListing, list_hf_files, list_hf_splits
from benchbook.datasets.sources.hf_viewer import PARQUET_MIN_ROWS, HfViewerSource
from benchbook.errors import InvalidInput

DATA_SUFFIXES = (".csv", ".jsonl", ".ndjson", ".json", ".parquet")
# Files ``datasets`` writes next to data (save_to_disk, old metadata): never rows.
METADATA_NAMES = {"dataset_infos.json", "dataset_info.json", "dataset_dict.json", "state.json"}
SHARD_RE = re.compile(r"^(?P<stem>.*)-\d{5}-of-(?P<count>\d{5})(?P<suffix>\..+)$")


def _bad(message: str, path: str = "source.file") -> InvalidInput:
    return InvalidInput(message, {"errors": [{"path": path, "message": message}]})


def is_data_file(path: str) -> bool:
    """A file whose extension says rows (``.gz`` allowed), outside hidden folders."""
    parts = PurePosixPath(path).parts
    if any(p.startswith(".") for p in parts) or parts[-1] in METADATA_NAMES:
        return False
    return path.lower().removesuffix(".gz").endswith(DATA_SUFFIXES)


def _names_split(path: str, word: str) -> bool:
    return re.search(rf"(^|[/_.\-]){re.escape(word.lower())}([/_.\-]|$)", path.lower()) is not None


def choose_data_files(
    listing: HfFileListing, split: str | None = None, config: str | None = None
) -> list[str]:
    """The data file(s) to read: the first candidate (root first) naming ``split`` and then
    ``config`` when given, with its sibling shards. ``[path, …]`` in read order.

    Raises:
        InvalidInput: no data file, a loading-script repo, or no file names the split while
            several candidates exist (the message lists them).
    """
    paths = [f.path for f in listing.files]
    candidates = [p for p in paths if is_data_file(p)]
    if not candidates:
        if any(p.endswith(".py") and "/" not in p for p in paths):
            raise script_error(listing.dataset)
        raise _bad(
            f"{listing.dataset} has no data file (csv, jsonl, json, parquet) at "
            f"{listing.revision}; files: {', '.join(paths[:20]) or 'none'}"
        )
    for word in (split, config):
        named = [p for p in candidates if word and _names_split(p, word)]
        if word and not named and len(candidates) > 1 and word == split:
            raise _bad(
                f"no file of {listing.dataset} names split {split!r}; set source.file to "
                f"one of: {', '.join(candidates[:20])}"
            )
        candidates = named or candidates
    return shards_of(candidates[0], paths)


def shards_of(path: str, paths: list[str]) -> list[str]:
    """``path`` and, when it is a shard ``<stem>-NNNNN-of-MMMMM<suffix>``, all its siblings."""
    match = SHARD_RE.match(path)
    if match is None:
        return [path]
    siblings = [
        p
        for p in paths
        if (m := SHARD_RE.match(p))
        and m.group("stem", "count", "suffix") == match.group("stem", "count", "suffix")
    ]
    return sorted(siblings)


class HfFileSource:
    """A ``RowSource`` over one data file (or one set of shards) of a Hub dataset repository.

    Opening resolves the revision, lists and downloads the file(s), so errors surface early.

    Args:
        hub: endpoints and token. dataset: ``owner/name``. revision: branch, tag or sha.
        file: the path to read; chosen by ``choose_data_files`` when None.
        config, split: recorded in ``ref``; ``split``/``config`` also guide the choice.
        format, json_key: passed to ``FileSource``.

    Attributes:
        ref: ``SourceRef(kind="huggingface", dataset, config, split, file, revision=<sha>,
            sha256=<file sha256 when one file>)``. total: the row count when known (Parquet).
        notes: why these files are read rather than the viewer's rows (set by the caller).

    Raises:
        NotFound: unknown dataset, revision or file. UpstreamError: unreachable, gated.
        InvalidInput: no usable data file; (while iterating) malformed rows, naming the line.
    """

    def __init__(
        self,
        hub: HfHub,
        dataset: str,
        revision: str = "main",
        file: str | None = None,
        config: str | None = None,
        split: str | None = None,
        format: FileFormat | None = None,
        json_key: str | None = None,
    ) -> None:
        with hub.client() as client:
            info = repo_info(hub, client, dataset, revision)
        if file is not None:
            chosen = [file]
        else:
            chosen = choose_data_files(list_hf_files(hub, dataset, info.sha), split, config)
        self.files = [
            FileSource(
                hub.download(dataset, path, info.sha, bool(info.gated)), format, json_key, path
            )
            for path in chosen
        ]
        totals = [f.total for f in self.files]
        self.total: int | None = None if None in totals else sum(t or 0 for t in totals)
        self.notes: list[str] = []
        label = chosen[0] if len(chosen) == 1 else f"{chosen[0]} (+{len(chosen) - 1} shards)"
        self.ref = SourceRef(
            kind="huggingface",
            dataset=dataset,
            config=config,
            split=split,
            file=label,
            revision=info.sha,
            sha256=self.files[0].ref.sha256 if len(chosen) == 1 else None,
        )

    def rows(self) -> Iterator[tuple[int, Row]]:
        """One file: its own row numbers (CSV/JSONL line numbers). Shards: counted across."""
        if len(self.files) == 1:
            yield from self.files[0].rows()
            return
        number = 0
        for source in self.files:
            for _, row in source.rows():
                number += 1
                yield number, row


def _pick_split(hub: HfHub, source: RecipeSource) -> tuple[str, str]:
    """``(config, split)``: as given, else the only one, else InvalidInput listing them."""
    if source.config and source.split:
        return source.config, source.split
    pairs = [
        (s.config, s.split)
        for s in list_hf_splits(hub, str(source.dataset))
        if source.config in (None, s.config) and source.split in (None, s.split)
    ]
    if len(pairs) != 1:
        shown = ", ".join(f"{c}/{s}" for c, s in pairs) or "none"
        raise _bad(f"choose a config and split of {source.dataset}: {shown}", "source.split")
    return pairs[0]


def open_huggingface_source(
    hub: HfHub, source: RecipeSource, parquet_min_rows: int = PARQUET_MIN_ROWS
) -> RowSource:
    """The rows a ``huggingface`` recipe source names.

    A named ``file`` reads that file. Otherwise the viewer (``HfViewerSource``, which falls back
    to the Parquet export and then the raw files at the same commit when it fails mid-split);
    when the viewer does not serve the dataset, or serves another commit than an explicit
    ``revision``, the raw files at that revision — never ``main`` in its place. The reason is
    the source's first ``notes`` entry.

    Raises:
        InvalidInput: no dataset named, ambiguous config/split, loading-script dataset.
        NotFound, UpstreamError: see ``hf_hub``.
    """
    if not source.dataset:
        raise _bad("a huggingface source needs a dataset (owner/name)", "source.dataset")
    dataset = source.dataset

    def files() -> HfFileSource:
        # The recipe's format describes its named file; a file picked here is named by extension.
        return HfFileSource(
            hub,
            dataset,
            source.revision or "main",
            source.file,
            source.config,
            source.split,
            source.format if source.file else None,
            source.json_key,
        )

    if source.file:
        return files()
    if source.revision:  # an unknown revision is NotFound before anything else is asked
        with hub.client() as client:
            repo_info(hub, client, dataset, source.revision)
    try:
        config, split = _pick_split(hub, source)

        def files_at(sha: str) -> HfFileSource:
            return HfFileSource(hub, dataset, sha, None, config, split, None, source.json_key)

        return HfViewerSource(
            hub, dataset, config, split, parquet_min_rows, source.revision, files_at
        )
    except ViewerUnavailable as exc:
        raw = files()
        raw.notes.append(f"{exc.message}; reading the raw files at commit {raw.ref.revision}")
        return raw
