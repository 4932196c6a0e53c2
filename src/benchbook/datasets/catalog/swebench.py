"""Repository benchmarks: SWE-bench Lite and Verified, ContextBench (verified subset)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchbook.contracts import GraderSpec, Origin, Recipe, Scoring
from benchbook.contracts.recipe import GraderTemplate, Mapping, RecipeSource
from benchbook.datasets import swebench
from benchbook.datasets.catalog.entry import CatalogEntry
from benchbook.datasets.contextbench import RELEASE_FILE, ContextBenchSource, normalize_row
from benchbook.datasets.mapping_rules import git_url
from benchbook.datasets.sources.base import Row

SWE_ORIGIN = {
    "homepage": "https://www.swebench.com/",
    "paper": "https://arxiv.org/abs/2310.06770",
    "code": "https://github.com/SWE-bench/SWE-bench",
    "authors": "Jimenez et al.",
    "license": "code MIT; the dataset declares no licence",
    "citation": (
        "Jimenez et al., SWE-bench: Can Language Models Resolve Real-World GitHub Issues?, "
        "ICLR 2024."
    ),
    "task_type": "repository-level issue resolution",
}


def _contextbench_hook(case: dict[str, Any], row: Row) -> None:
    """Normalize a ContextBench row (SPEC I, :mod:`benchbook.datasets.contextbench`): decoded,
    validated and de-duplicated ``gold_context`` with checkout prefixes stripped, decoded
    ``f2p``/``p2p``, and ``owner/repo`` recovered from ``original_inst_id`` for the checkout.
    Idempotent: rows from :class:`ContextBenchSource` are normalized already."""
    normal = normalize_row(row, f"ContextBench row {row.get('instance_id')}")
    for key in ("gold_context", "f2p", "p2p", "repo"):
        if key in case["metadata"]:
            case["metadata"][key] = normal[key]
    case["env"]["source"]["git"] = git_url(normal["repo"])


def _swe_entry(entry_id: str, dataset: str, description: str) -> CatalogEntry:
    return CatalogEntry(
        Recipe(
            id=entry_id,
            version="1.1.0",
            description=description,
            category="coding",
            origin=Origin(data=f"https://huggingface.co/datasets/{dataset}", **SWE_ORIGIN),
            scoring=Scoring(kind="official", official_evaluator="swebench.harness.run_evaluation"),
            source=RecipeSource(kind="huggingface", dataset=dataset, split="test"),
            mapping=Mapping(
                id_field=swebench.ID_FIELD,
                task_field=swebench.TASK_FIELD,
                env="repo",
                git_field="repo",
                ref_field="base_commit",
                metadata_fields=list(swebench.METADATA_FIELDS),
                gold_fields=list(swebench.GOLD_FIELDS),
            ),
            grader_templates=[GraderTemplate(id="swe-bench"), GraderTemplate(id="localization")],
        ),
        hook=swebench.apply_row,
        file_source=swebench.swebench_file,
    )


SWE_BENCH_LITE = _swe_entry(
    "swe-bench-lite",
    "princeton-nlp/SWE-bench_Lite",
    "300 GitHub issues from 11 Python repositories; the agent edits a checkout of the repository "
    "at base_commit (from the mirror cache; the official image is named in metadata); graded by "
    "the SWE-bench tests (FAIL_TO_PASS, PASS_TO_PASS).",
)
SWE_BENCH_VERIFIED = _swe_entry(
    "swe-bench-verified",
    "princeton-nlp/SWE-bench_Verified",
    "500 human-validated SWE-bench issues; the agent edits a checkout of the repository at "
    "base_commit (from the mirror cache; the official image is named in metadata); graded by "
    "the SWE-bench tests (FAIL_TO_PASS, PASS_TO_PASS).",
)

CB_GOLD = ["gold_context", "patch", "test_patch", "f2p", "p2p", "hints_text"]
CB_ORIGIN = Origin(
    paper="https://arxiv.org/abs/2602.05892",
    code="https://github.com/EuniAI/ContextBench",
    data="https://huggingface.co/datasets/Contextbench/ContextBench",
    license="code Apache-2.0; the data declares none",
    task_type="code context retrieval",
)


def _contextbench_file(path: Path, name: str | None) -> ContextBenchSource:
    return ContextBenchSource(path, name)


def _contextbench_entry(
    entry_id: str, description: str, source: RecipeSource, tag_fields: list[str]
) -> CatalogEntry:
    return CatalogEntry(
        Recipe(
            id=entry_id,
            version="1.0.0",
            description=description,
            category="coding",
            origin=CB_ORIGIN,
            scoring=Scoring(kind="official", approximates="ContextBench retrieval metrics"),
            source=source,
            mapping=Mapping(
                id_field="instance_id",
                task_field="problem_statement",
                git_field="repo",
                ref_field="base_commit",
                env="repo",
                tag_fields=tag_fields,
                gold_fields=CB_GOLD,
                extra_graders=[GraderSpec(id="localization")],
            ),
        ),
        hook=_contextbench_hook,
        file_source=_contextbench_file,
    )


CONTEXTBENCH = _contextbench_entry(
    "contextbench",
    "ContextBench (50-row verified test release, pinned by sha256): Verified, Multi, Poly and "
    "Pro instances in seven languages; the agent works in a checkout at the base commit and is "
    "scored on the gold context it retrieved (file, symbol, span, line).",
    RecipeSource(kind="file", file=RELEASE_FILE, format="parquet"),
    ["language", "source"],
)
CONTEXTBENCH_VERIFIED = _contextbench_entry(
    "contextbench-verified",
    "ContextBench's SWE-bench-Verified subset: the agent works in a checkout at the base "
    "commit; scored by how well it retrieves the gold context (file, symbol, span, line).",
    RecipeSource(
        kind="huggingface",
        dataset="Contextbench/ContextBench",
        config="contextbench_verified",
        split="train",
    ),
    ["language"],
)

ENTRIES = [SWE_BENCH_LITE, SWE_BENCH_VERIFIED, CONTEXTBENCH, CONTEXTBENCH_VERIFIED]
