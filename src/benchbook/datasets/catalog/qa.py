"""Question-answering benchmarks: GSM8K and GAIA."""

from __future__ import annotations

from benchbook.contracts import Origin, Recipe, Scoring
from benchbook.contracts.recipe import GraderTemplate, Mapping, RecipeSource
from benchbook.datasets.catalog.entry import CatalogEntry

GSM8K = CatalogEntry(
    Recipe(
        id="gsm8k",
        version="1.0.0",
        description=(
            "Grade-school math word problems. The expected answer is the "
            "final number written after '####'; the full worked solution is kept as gold metadata."
        ),
        category="qa",
        origin=Origin(
            paper="https://arxiv.org/abs/2110.14168",
            code="https://github.com/openai/grade-school-math",
            data="https://huggingface.co/datasets/openai/gsm8k",
            authors="Cobbe et al. (OpenAI)",
            license="MIT",
            citation="Cobbe et al., Training Verifiers to Solve Math Word Problems, 2021.",
            task_type="math word problems",
        ),
        scoring=Scoring(
            kind="official", official_evaluator="https://github.com/openai/grade-school-math"
        ),
        source=RecipeSource(
            kind="huggingface", dataset="openai/gsm8k", config="main", split="test", format="jsonl"
        ),
        mapping=Mapping(
            task_field="question",
            answer_field="answer",
            answer_pattern=r"####\s*(.+?)\s*$",
            env="prompt",
            gold_fields=["answer"],
        ),
        grader_templates=[GraderTemplate(id="numeric", config={"mode": "flexible-extract"})],
    )
)

GAIA = CatalogEntry(
    Recipe(
        id="gaia",
        version="1.0.0",
        description=(
            "General AI assistant questions (levels 1-3) needing reasoning, browsing and tools. "
            "Gated on Hugging Face: accept the terms and set an HF_TOKEN secret."
        ),
        category="qa",
        origin=Origin(
            paper="https://arxiv.org/abs/2311.12983",
            data="https://huggingface.co/datasets/gaia-benchmark/GAIA",
            leaderboard="https://huggingface.co/spaces/gaia-benchmark/leaderboard",
            authors="Mialon et al.",
            license="gated; dataset terms forbid resharing in a crawlable format",
            citation="Mialon et al., GAIA: a benchmark for General AI Assistants, 2023.",
            task_type="assistant questions with tools",
        ),
        scoring=Scoring(
            kind="official",
            official_evaluator=(
                "https://huggingface.co/spaces/gaia-benchmark/leaderboard/blob/main/scorer.py"
            ),
        ),
        source=RecipeSource(
            kind="huggingface",
            dataset="gaia-benchmark/GAIA",
            config="2023_all",
            split="validation",
            gated=True,
        ),
        mapping=Mapping(
            id_field="task_id",
            task_field="Question",
            answer_field="Final answer",
            tag_fields=["Level"],
            env="prompt",
        ),
        grader_templates=[GraderTemplate(id="gaia")],
    )
)

ENTRIES = [GSM8K, GAIA]
