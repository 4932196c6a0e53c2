"""Browser benchmarks: WebVoyager and Mind2Web."""

from __future__ import annotations

from benchbook.contracts import GraderSpec, Origin, Recipe, Scoring
from benchbook.contracts.recipe import GraderTemplate, Mapping, RecipeSource
from benchbook.datasets.catalog.entry import CatalogEntry

JUDGE_RUBRIC = (
    "Pass only if the final answer or the final page state fully accomplishes the task. "
    "Judge from the answer and the trace; partial completion fails."
)

WEBVOYAGER = CatalogEntry(
    Recipe(
        id="webvoyager",
        version="1.0.0",
        description=(
            "Tasks on 15 live websites; the agent starts at the site's URL. Scored by a judge "
            "rubric (the upstream evaluator is a GPT-4V judge over screenshots)."
        ),
        category="browser",
        origin=Origin(
            paper="https://arxiv.org/abs/2401.13919",
            code="https://github.com/MinorJerry/WebVoyager",
            data="https://github.com/MinorJerry/WebVoyager/tree/main/data",
            authors="He et al.",
            license="Apache-2.0",
            citation=(
                "He et al., WebVoyager: Building an End-to-End Web Agent with Large Multimodal "
                "Models, ACL 2024."
            ),
            task_type="web navigation",
        ),
        scoring=Scoring(
            kind="proxy",
            approximates="WebVoyager's GPT-4V screenshot judge",
            official_evaluator="https://github.com/MinorJerry/WebVoyager/tree/main/evaluation",
        ),
        source=RecipeSource(kind="file", file="WebVoyager_data.jsonl", format="jsonl"),
        mapping=Mapping(
            id_field="id",
            task_field="ques",
            start_url_field="web",
            tag_fields=["web_name"],
            env="browser",
        ),
        grader_templates=[GraderTemplate(id="judge", config={"rubric": JUDGE_RUBRIC})],
    )
)

MIND2WEB = CatalogEntry(
    Recipe(
        id="mind2web",
        version="1.0.0",
        description=(
            "Tasks on real websites with annotated action sequences. The annotated actions are "
            "gold (never shown to the agent); scored by step match plus a judge."
        ),
        category="browser",
        origin=Origin(
            homepage="https://osu-nlp-group.github.io/Mind2Web/",
            paper="https://arxiv.org/abs/2306.06070",
            code="https://github.com/OSU-NLP-Group/Mind2Web",
            data="https://huggingface.co/datasets/osunlp/Mind2Web",
            authors="Deng et al.",
            license="CC-BY-4.0",
            citation="Deng et al., Mind2Web: Towards a Generalist Agent for the Web, NeurIPS 2023.",
            task_type="web navigation",
        ),
        scoring=Scoring(kind="proxy", approximates="Mind2Web step success rate"),
        source=RecipeSource(kind="huggingface", dataset="osunlp/Mind2Web", split="train"),
        mapping=Mapping(
            id_field="annotation_id",
            task_field="confirmed_task",
            tag_fields=["website", "domain", "subdomain"],
            env="browser",
            metadata_fields=["website", "domain", "subdomain", "action_reprs"],
            gold_fields=["action_reprs"],
            extra_graders=[GraderSpec(id="steps")],
        ),
        grader_templates=[GraderTemplate(id="judge", config={"rubric": JUDGE_RUBRIC})],
    )
)

ENTRIES = [WEBVOYAGER, MIND2WEB]
