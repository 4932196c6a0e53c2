"""The gold locations Benchbook derives from a patch or a case (SPEC I; issue 29).

One use case, ``derive_gold_locations``, over CLI (``benchbook localization gold``), HTTP
(``POST /api/localization/gold``) and MCP (tool ``derive_gold_locations``): the files, line
ranges and definitions :func:`benchbook.datasets.gold.gold_locations` finds, and the spans the
``localization`` grader scores against. Nothing is stored; nothing is cloned (a case's base tree
is read from the mirror cache when it is there).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from benchbook.contracts.dataset import Case, GitSource
from benchbook.contracts.localization import GoldFile, GoldLocations, GoldSymbolOut
from benchbook.datasets.gold import FileGold, LineRange, gold_locations, patch_lines
from benchbook.errors import InvalidInput
from benchbook.eval.checkout import Checkout
from benchbook.eval.graders.localization import gold_spans
from benchbook.runtime.environments.mirrors import has_commit
from benchbook.services.bounds import check_text
from benchbook.services.context import Context
from benchbook.services.datasets import get_case
from benchbook.services.localization import mirror_of
from benchbook.services.runs import split_ref

MAX_PATCH_BYTES = 16 * 1024 * 1024


def _pair(r: LineRange | None) -> list[int] | None:
    return None if r is None else [r.start, r.end]


def _ranges(ranges: list[LineRange]) -> list[list[int]]:
    return [[r.start, r.end] for r in ranges]


def gold_file(fg: FileGold) -> GoldFile:
    """The contract form of one :class:`~benchbook.datasets.gold.FileGold`."""
    return GoldFile(
        path=fg.path,
        old_path=fg.old_path,
        status=fg.status,
        binary=fg.binary,
        file_level=fg.file_level,
        removed=_ranges(fg.removed),
        added=_ranges(fg.added),
        inserted=_ranges(fg.inserted),
        enclosing=_ranges(fg.enclosing),
        symbols=[
            GoldSymbolOut(
                id=s.id,
                kind=s.kind,
                change=s.change,
                base_lines=_pair(s.base_lines),
                patched_lines=_pair(s.patched_lines),
            )
            for s in fg.symbols
        ],
    )


def _owner_name(url: str) -> str:
    """``owner/name`` of a repository URL (``https://github.com/pydata/xarray.git``)."""
    return urlsplit(url).path.strip("/").removesuffix(".git")


def _of_case(ctx: Context, dataset: str, case_id: str) -> GoldLocations:
    dataset_id, ref = split_ref(dataset, "dataset")
    case: Case = get_case(ctx, dataset_id, ref, case_id)
    out = GoldLocations(dataset=dataset, case_id=case_id)
    source = getattr(case.env, "source", None)
    mirror = mirror_of(ctx, case)
    checkout = None
    if mirror is not None and isinstance(source, GitSource) and has_commit(mirror, source.ref):
        checkout, out.base = Checkout.from_git(mirror, source.ref), "mirror"
    elif mirror is not None and isinstance(source, GitSource):
        out.warnings.append(
            f"commit {source.ref} is not in the mirror of {_owner_name(source.git)} (a shallow "
            "mirror?): lines only, no definitions (benchbook mirrors add a source holding it)"
        )
    elif isinstance(source, GitSource):
        out.warnings.append(
            f"no mirror of {source.git} in the cache: lines only, no definitions "
            "(benchbook mirrors add)"
        )
    patch = case.metadata.get("patch")
    if isinstance(patch, str) and patch.strip():
        files = gold_locations(patch, checkout.content) if checkout else patch_lines(patch)
        out.files = [gold_file(fg) for fg in files]
    try:
        out.spans = list(gold_spans(case, checkout))
    except ValueError as exc:
        raise InvalidInput(f"case {case_id!r}: {exc}", {"case_id": case_id}) from exc
    return out


def derive_gold_locations(
    ctx: Context, dataset: str | None = None, case_id: str | None = None, patch: str | None = None
) -> GoldLocations:
    """Gold locations of a case (``dataset`` = ``id`` or ``id@version`` and ``case_id``) or of
    a unified diff (``patch``, the patch alone: lines, no definitions).

    Raises:
        Forbidden: without ``datasets:read``.
        NotFound: unknown dataset, version or case (or another workspace's).
        InvalidInput: neither or both of a case and a patch; the patch is not a unified diff
            (no ``---``/``+++`` file header; a hunk longer or shorter than its header names the
            header); the case has no gold.
    """
    ctx.require("datasets:read")
    if patch is not None and (dataset or case_id):
        raise InvalidInput("give a case (dataset and case_id) or a patch, not both", {})
    if patch is not None:
        check_text(patch, "patch")
        if not patch.strip():
            raise InvalidInput("patch: empty; give a unified diff", {"field": "patch"})
        if len(patch.encode()) > MAX_PATCH_BYTES:
            raise InvalidInput(f"patch: larger than {MAX_PATCH_BYTES} bytes", {"field": "patch"})
        files = patch_lines(patch)
        if not files:
            raise InvalidInput(
                "patch: not a unified diff: no file header (---/+++) found", {"field": "patch"}
            )
        spans_case = Case(id="patch", env={"kind": "prompt"}, task="-", metadata={"patch": patch})
        return GoldLocations(
            files=[gold_file(fg) for fg in files], spans=list(gold_spans(spans_case))
        )
    if not dataset or not case_id:
        raise InvalidInput("give a case (dataset and case_id) or a patch", {})
    return _of_case(ctx, dataset, case_id)
