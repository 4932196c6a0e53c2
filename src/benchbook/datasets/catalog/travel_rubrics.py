"""Proxy judge rubrics for the travel family, as data (SPEC F).

None of these benchmarks' official evaluators can run here (they need their sandbox databases
or model judges), so each entry's ``judge`` grader carries a criteria list that approximates its
evaluator, with ``scoring = {kind: proxy, approximates, official_evaluator}`` in the grader config
itself. Rows that cannot be satisfied (TREK ``impossible``, TravelBench ``no_actionable`` /
``missing_tool`` / ``missing_info``) get :data:`REFUSAL_RUBRIC` instead: the case passes only on
a reasoned refusal. The row's flag is parsed numerically (``"0.0"`` → false, ``"1.0"`` → true).

Grader config strings are templates at import time, so rubric text never contains braces.
"""

from __future__ import annotations

from typing import Any

from benchbook.contracts import Scoring
from benchbook.contracts.recipe import GraderTemplate
from benchbook.datasets.mapping_rules import parse_flag
from benchbook.datasets.sources.base import Row

Criteria = list[dict[str, str]]


def _criteria(*pairs: tuple[str, str]) -> Criteria:
    return [{"id": cid, "description": text} for cid, text in pairs]


# TravelPlanner's evaluator: delivery, commonsense constraints (commonsense_constraint.py) and
# hard constraints (hard_constraint.py); Xie et al. 2024, section 3.
TRAVELPLANNER_CRITERIA = _criteria(
    ("delivery", "A complete day-by-day plan is delivered for every day of the trip."),
    (
        "sandbox",
        "Every flight, restaurant, attraction and accommodation comes from the reference "
        "information.",
    ),
    ("complete_information", "No day leaves transport, meals or accommodation unexplained."),
    ("current_city", "Each day's activities are in that day's current city."),
    (
        "city_route",
        "The route starts at the origin, visits the required cities and returns to the origin.",
    ),
    ("diverse_restaurants", "No restaurant is used more than once."),
    ("diverse_attractions", "No attraction is visited more than once."),
    (
        "transportation_conflict",
        "Transport modes do not conflict (no self-driving mixed with flights or taxis).",
    ),
    ("minimum_nights", "Each accommodation's minimum-nights rule is met."),
    ("budget", "The total cost stays within the budget."),
    (
        "room_rule",
        "The house rules asked for (smoking, parties, children, pets, visitors) are respected.",
    ),
    ("room_type", "The requested room type is booked."),
    ("cuisine", "Every requested cuisine is served in at least one meal."),
    (
        "transportation_rule",
        "The transport restriction in the query (for example no flights) is respected.",
    ),
)
FLEX_CRITERIA = [
    *TRAVELPLANNER_CRITERIA,
    {
        "id": "added_constraints",
        "description": (
            "Constraints added in later turns are honoured without breaking earlier ones."
        ),
    },
]
# TREK's hard constraints: the req_* and hard_constraints columns of trek_queries.csv.
TREK_CRITERIA = _criteria(
    ("delivery", "A complete plan is delivered for every day and every traveller."),
    ("people_and_days", "The plan covers the stated number of travellers and days."),
    ("budget", "The total cost for all travellers stays within the budget."),
    ("flights", "Flights follow the route, trip type (one-way or round) and direct-flight rules."),
    ("city_order", "The cities are visited in the required order, each on plausible dates."),
    ("hotel", "Hotel requirements (named hotel, number of rooms) are met every night."),
    ("attractions", "Every required attraction is visited."),
    ("car", "Car-rental requirements are met when asked."),
    (
        "implicit_needs",
        "Implicit needs of the travellers (elderly, children, pets, business) are accommodated.",
    ),
)
# TravelBench's evaluator scores the assistant's reply to an in-car request from tool results.
TRAVELBENCH_CRITERIA = _criteria(
    ("intent", "The reply addresses the request's primary intent."),
    (
        "tool_grounding",
        "Facts (places, routes, times, prices, weather) come from tool results, not invention.",
    ),
    ("context", "The reply uses the context given (location, navigation state, time)."),
    ("actionable", "The reply is concise and actionable for a driver."),
)
# TravelEval's metrics: constraint, economy, space, time, utility and accuracy (core/metrics).
TRAVELEVAL_CRITERIA = _criteria(
    ("constraints", "Every explicit constraint of the query is satisfied."),
    ("accuracy", "Every place, train or flight named exists in the city and matches the query."),
    ("time", "The schedule is feasible: opening hours, travel times and no overlaps."),
    ("space", "The daily routes are geographically reasonable, without needless back-and-forth."),
    ("economy", "The cost is within the budget and reasonable for the plan."),
    ("utility", "The plan is useful: it fills the days with relevant activities, meals and rest."),
)
REFUSAL_CRITERIA = _criteria(
    (
        "refuses",
        "The agent does not present a plan, booking or result as if the request could be met.",
    ),
    (
        "explains_reason",
        "The agent names what makes the request impossible: the conflicting constraint, the "
        "missing tool or the missing information.",
    ),
)
REFUSAL_RUBRIC: dict[str, Any] = {
    "kind": "refusal",
    "criteria": REFUSAL_CRITERIA,
    "pass_rule": "all",
    "refusal": True,
}
REFUSAL = (
    "This request cannot be satisfied as stated. Pass only if the agent refuses and explains "
    "which constraint makes it infeasible; any concrete plan fails."
)


def plan_judge(
    criteria: Criteria, scoring: Scoring, kind: str = "plan", answer_file: str | None = None
) -> GraderTemplate:
    """The ``judge`` grader template: the proxy rubric plus the scoring it approximates."""
    config: dict[str, Any] = {
        "rubric": {"kind": kind, "criteria": criteria, "pass_rule": "all", "refusal": False},
        "scoring": scoring.model_dump(exclude_none=True),
    }
    if answer_file:
        config["answer_file"] = answer_file
    return GraderTemplate(id="judge", config=config)


def _with_refusal_rubric(grader: dict[str, Any]) -> dict[str, Any]:
    # New dicts: graders built from constants are shared between rows and must not change.
    if grader.get("id") != "judge":
        return grader
    return {**grader, "config": {**grader.get("config", {}), "rubric": REFUSAL_RUBRIC}}


def refusal_hook(*flags: str) -> Any:
    """A case hook: when any flag column parses true, the case expects a reasoned refusal
    (``expected`` = :data:`REFUSAL`) and its judge uses :data:`REFUSAL_RUBRIC`.

    Raises:
        ValueError: a flag value is not a number, a yes/no word or empty (a row error).
    """

    def hook(case: dict[str, Any], row: Row) -> None:
        if any(parse_flag(row.get(f)) for f in flags):
            case["expected"] = REFUSAL
            case["graders"] = [_with_refusal_rubric(g) for g in case.get("graders", [])]

    return hook
