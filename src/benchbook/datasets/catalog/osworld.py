"""Desktop benchmarks: OSWorld (a folder of one-task-per-file JSON)."""

from __future__ import annotations

from benchbook.contracts import Origin, Placement, Recipe, Scoring
from benchbook.contracts.recipe import GraderTemplate, Mapping, RecipeSource
from benchbook.datasets.catalog.entry import CatalogEntry

OSWORLD = CatalogEntry(
    Recipe(
        id="osworld",
        version="1.0.0",
        description=(
            "Desktop tasks across 10 application domains (examples/<domain>/<id>.json). "
            "Ids shared by two domains become <domain>/<id>. The upstream state checks "
            "(`evaluator`) are kept as gold; scored by a screenshot judge plus the optional "
            "state check (a proxy of OSWorld's execution-based evaluation)."
        ),
        category="desktop",
        origin=Origin(
            homepage="https://os-world.github.io/",
            paper="https://arxiv.org/abs/2404.07972",
            code="https://github.com/xlang-ai/OSWorld",
            authors="Xie et al.",
            license="Apache-2.0",
            citation=(
                "Xie et al., OSWorld: Benchmarking Multimodal Agents for Open-Ended Tasks in Real "
                "Computer Environments, NeurIPS 2024."
            ),
            task_type="computer use",
        ),
        scoring=Scoring(
            kind="proxy",
            approximates="OSWorld execution-based evaluators",
            official_evaluator="https://github.com/xlang-ai/OSWorld/tree/main/desktop_env/evaluators",
        ),
        source=RecipeSource(kind="file", file="evaluation_examples/examples", format="json"),
        mapping=Mapping(
            id_field="id",
            task_field="instruction",
            env="os-use",
            placement=Placement(os="linux"),
            tag_fields=["snapshot"],
            gold_fields=["evaluator"],
        ),
        grader_templates=[
            GraderTemplate(
                id="judge",
                config={
                    "rubric": "Pass only if the final screenshot shows the task completed.",
                    "screenshot": True,
                    "state_check": "evaluator",
                },
            )
        ],
    )
)

ENTRIES = [OSWORLD]
