"""Travel-planning benchmarks: TravelPlanner (inline and file-system variants),
Flex-TravelPlanner, TREK, TravelBench and TravelEval. All are proxy-judged."""

from __future__ import annotations

from typing import Any

from benchbook.contracts import Origin, Recipe, Scoring
from benchbook.contracts.recipe import Mapping, RecipeSource
from benchbook.datasets.catalog.entry import CatalogEntry
from benchbook.datasets.catalog.travel_rubrics import (
    FLEX_CRITERIA,
    TRAVELBENCH_CRITERIA,
    TRAVELEVAL_CRITERIA,
    TRAVELPLANNER_CRITERIA,
    TREK_CRITERIA,
    plan_judge,
    refusal_hook,
)

TP_TASK = "{query}\n\nReference information:\n{reference_information?}"
TP_ORIGIN = Origin(
    homepage="https://osu-nlp-group.github.io/TravelPlanner/",
    paper="https://arxiv.org/abs/2402.01622",
    code="https://github.com/OSU-NLP-Group/TravelPlanner",
    data="https://huggingface.co/datasets/osunlp/TravelPlanner",
    leaderboard="https://huggingface.co/spaces/osunlp/TravelPlannerLeaderboard",
    authors="Xie et al.",
    license="CC-BY-4.0 (data); MIT (code)",
    citation=(
        "Xie et al., TravelPlanner: A Benchmark for Real-World Planning with Language Agents, "
        "ICML 2024."
    ),
    task_type="travel planning",
)
TP_SOURCE = RecipeSource(
    kind="huggingface", dataset="osunlp/TravelPlanner", config="validation", split="validation"
)
TP_SCORING = Scoring(
    kind="proxy",
    approximates="TravelPlanner's evaluator: delivery, commonsense and hard-constraint pass rates",
    official_evaluator="https://github.com/OSU-NLP-Group/TravelPlanner/blob/main/evaluation/eval.py",
)


def _entry(**kwargs: Any) -> CatalogEntry:
    hook = kwargs.pop("hook", None)
    kwargs.setdefault("version", "1.0.0")
    kwargs.setdefault("category", "qa")
    criteria = kwargs.pop("criteria")
    answer_file = kwargs.pop("answer_file", None)
    judge = plan_judge(criteria, kwargs["scoring"], answer_file=answer_file)
    kwargs.setdefault("grader_templates", [judge])
    return CatalogEntry(Recipe(**kwargs), hook=hook)


#: TravelPlanner validation columns kept as case metadata (the query is the task).
TP_METADATA = [
    "org",
    "dest",
    "days",
    "date",
    "level",
    "budget",
    "people_number",
    "local_constraint",
    "visiting_city_number",
]
TRAVELPLANNER = _entry(
    id="travelplanner",
    criteria=TRAVELPLANNER_CRITERIA,
    description=(
        "TravelPlanner validation queries with the reference information inline; "
        "proxy judge rubric."
    ),
    origin=TP_ORIGIN,
    scoring=TP_SCORING,
    source=TP_SOURCE,
    mapping=Mapping(
        task_template=TP_TASK,
        env="prompt",
        tag_fields=["level"],
        metadata_fields=TP_METADATA,
    ),
)
TRAVELPLANNER_FS = _entry(
    id="travelplanner-fs",
    criteria=TRAVELPLANNER_CRITERIA,
    answer_file="plan.md",
    description=(
        "TravelPlanner with the reference information as a file in a repo env; the agent "
        "writes its plan to plan.md. Proxy judge rubric."
    ),
    category="tool",
    origin=TP_ORIGIN,
    scoring=TP_SCORING,
    source=TP_SOURCE,
    mapping=Mapping(
        task_template=(
            "{query}\n\nThe reference information is in reference_information.txt. "
            "Write the day-by-day plan to plan.md."
        ),
        env="repo",
        files_template={"reference_information.txt": "{reference_information?}"},
        tag_fields=["level"],
        metadata_fields=TP_METADATA,
    ),
)
FLEX_TRAVELPLANNER = _entry(
    id="flex-travelplanner",
    criteria=FLEX_CRITERIA,
    description=(
        "Flex-TravelPlanner: TravelPlanner queries with constraints added over turns; "
        "proxy judge. No licence declared."
    ),
    origin=Origin(
        code="https://github.com/juhyunohh/FlexTravelBench",
        license="none declared",
        task_type="travel planning",
    ),
    scoring=Scoring(
        kind="proxy",
        approximates="Flex-TravelPlanner's evaluation (TravelPlanner constraints over turns)",
        official_evaluator="https://github.com/juhyunohh/FlexTravelBench",
    ),
    source=RecipeSource(kind="file", format="json"),
    mapping=Mapping(id_field="idx", task_template=TP_TASK, env="prompt", tag_fields=["level"]),
)
TREK = _entry(
    id="trek",
    criteria=TREK_CRITERIA,
    description=(
        "TREK trip-planning queries (CSV, no id column: positional ids); every column kept in "
        "metadata. Proxy judge; `impossible` rows pass only on a reasoned refusal."
    ),
    origin=Origin(
        code="https://github.com/TonyQJH/TREK-A-Travel-Reasoning-and-Evaluation-Kit-for-LLM-Agents-in-Complex-Trip-Planning",
        license="CC-BY-4.0 (data); MIT (code)",
        authors="The TREK Authors",
        task_type="travel planning",
    ),
    scoring=Scoring(
        kind="proxy",
        approximates="TREK's constraint evaluation",
        official_evaluator=(
            "https://github.com/TonyQJH/TREK-A-Travel-Reasoning-and-Evaluation-Kit-for-LLM-Agents-in-Complex-Trip-Planning"
        ),
    ),
    source=RecipeSource(kind="file", file="trek_queries.csv", format="csv"),
    mapping=Mapping(
        task_field="query",
        env="prompt",
        tag_fields=["level"],
        metadata_fields=[
            "query",
            "level",
            "implicit_keywords",
            "hard_constraints",
            "req_flight",
            "req_car",
            "req_hotel",
            "req_attraction",
            "cities_count",
            "implicit_keywords_count",
            "balance",
            "impossible",
            "total_score",
        ],
        flag_fields=["impossible", "balance"],
    ),
    hook=refusal_hook("impossible"),
)
TRAVELBENCH = _entry(
    id="travelbench",
    criteria=TRAVELBENCH_CRITERIA,
    description=(
        "TravelBench in-car travel assistant requests (JSONL; trace_id restarts per file). Proxy "
        "judge; rows flagged no_actionable, missing_tool or missing_info pass only on a reasoned "
        "refusal. Data licence CC BY-NC 4.0: non-commercial use only."
    ),
    category="tool",
    origin=Origin(
        code="https://github.com/small-xiangcheng/TravelBench",
        license="CC-BY-NC-4.0 (data, non-commercial); MIT (code)",
        task_type="travel assistant",
    ),
    scoring=Scoring(
        kind="proxy",
        approximates="TravelBench's evaluation (evaluate.py; evaluate_unsolved.py for refusals)",
        official_evaluator="https://github.com/small-xiangcheng/TravelBench/tree/main/travelbench/evaluation",
    ),
    source=RecipeSource(kind="file", file="single_turn.jsonl", format="jsonl"),
    mapping=Mapping(
        id_field="trace_id",
        task_template="{query}\n\n{context?}",
        env="prompt",
        tag_fields=["primary_intent"],
        flag_fields=["no_actionable", "missing_tool", "missing_info"],
    ),
    hook=refusal_hook("no_actionable", "missing_tool", "missing_info"),
)
TRAVELEVAL = _entry(
    id="traveleval",
    criteria=TRAVELEVAL_CRITERIA,
    description=(
        "TravelEval trip-planning queries (JSON object wrapping `queries`); proxy judge. "
        "No licence declared."
    ),
    origin=Origin(
        code="https://github.com/onlycwy11/TravelEval",
        license="none declared",
        task_type="travel planning",
    ),
    scoring=Scoring(
        kind="proxy",
        approximates="TravelEval's evaluator (constraint, economy, space, time, utility metrics)",
        official_evaluator="https://github.com/onlycwy11/TravelEval/blob/main/core/evaluator.py",
    ),
    source=RecipeSource(kind="file", file="easy.json", format="json", json_key="queries"),
    mapping=Mapping(
        id_field="uid", task_field="nature_language_en", env="prompt", tag_fields=["tag"]
    ),
)

ENTRIES = [TRAVELPLANNER, TRAVELPLANNER_FS, FLEX_TRAVELPLANNER, TREK, TRAVELBENCH, TRAVELEVAL]
