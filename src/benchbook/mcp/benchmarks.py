"""Guidance for the benchmark catalog and import tools (SPEC E, F)."""

from __future__ import annotations

from benchbook.mcp.guide import ToolGuide

REQUEST = (
    "What to import: exactly one of 'benchmark' (a catalog id from list_benchmarks), 'recipe' "
    "({id, version}) or 'spec' (an inline recipe: source + mapping). Optional: 'id' (target "
    "dataset id), 'version' or 'bump' (patch|minor|major), 'limit' (max source rows), 'text' "
    "(inline file content for file sources, with 'format'), 'split'/'config' (Hugging Face)."
)

HF_DATASET = "A Hugging Face dataset id, 'owner/name'."

GUIDES: dict[str, ToolGuide] = {
    "list_benchmarks": ToolGuide(
        advice="The first-party catalog: ids to pass as 'benchmark' to preview/import.",
        read_only=True,
    ),
    "get_benchmark": ToolGuide(
        parameters={"benchmark": "A catalog id from list_benchmarks."},
        read_only=True,
    ),
    "preview_benchmark_source": ToolGuide(
        advice=(
            "Reads at most 20 source rows and shows the fields, the built cases and warnings "
            "(rows that would fail, with row numbers). Writes nothing; call it before "
            "import_benchmark. Local files cannot be read over MCP: pass file content as "
            "'text', or use a Hugging Face or catalog source."
        ),
        parameters={"request": REQUEST},
        read_only=True,
        open_world=True,
    ),
    "import_benchmark": ToolGuide(
        advice=(
            "Imports the source as a dataset version in one transaction: a bad row rejects "
            "everything (invalid_input naming the row). Re-importing an unchanged source is a "
            "no-op (created: false); a changed source needs a new version ('bump': 'minor'), "
            "otherwise it is a conflict — versions are immutable."
        ),
        parameters={"request": REQUEST},
        idempotent=True,
        open_world=True,
    ),
    "search_hf_datasets": ToolGuide(
        advice="Find a Hugging Face dataset to import; then list_hf_splits or list_hf_files.",
        parameters={"q": "Part of a dataset id, e.g. 'gsm8k'.", "limit": "Hits, 1-100."},
        read_only=True,
        open_world=True,
    ),
    "list_hf_splits": ToolGuide(
        parameters={"dataset": HF_DATASET},
        read_only=True,
        open_world=True,
    ),
    "list_hf_files": ToolGuide(
        parameters={"dataset": HF_DATASET, "revision": "A branch, tag or commit sha."},
        read_only=True,
        open_world=True,
    ),
}
"""Operation name → guide, for ``services/imports.py`` and ``services/hf.py``."""
