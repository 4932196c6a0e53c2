"""Plan identity (SPEC H.5, H.9): content hashes of grader specs and of a run's grading plan.

A grader spec's hash is the SHA-256 of its canonical JSON (DESIGN "Identity of content": the
parsed model dumped in JSON mode with defaults filled, keys sorted, compact, UTF-8), so two specs
spelled with different key orders hash the same. A plan's hash covers its grader hashes **in
plan order**: graders are applied and reported in that order, so reordering a plan is a
different plan (and makes two scorecards "not comparable" in SPEC H.7).
"""

from __future__ import annotations

from benchbook.contracts.dataset import Case, GraderSpec
from benchbook.contracts.run import RunPlan
from benchbook.datasets.identity import canonical_json, sha256_hex


def grader_hash(spec: GraderSpec) -> str:
    """SHA-256 hex (64 chars) of the canonical JSON of ``spec.model_dump(mode="json")``."""
    return sha256_hex(canonical_json(spec.model_dump(mode="json")))


def plan_hash(plan: RunPlan) -> str:
    """SHA-256 hex of the canonical JSON of the ordered list of the plan's grader hashes.

    Order matters: ``[a, b]`` and ``[b, a]`` hash differently. An empty plan (each case's own
    graders) hashes the canonical JSON ``[]``.
    """
    return sha256_hex(canonical_json([grader_hash(spec) for spec in plan.graders]))


def effective_graders(plan: RunPlan, case: Case) -> list[GraderSpec]:
    """The graders applied to ``case``: ``plan.graders`` when non-empty, else ``case.graders``."""
    return list(plan.graders) if plan.graders else list(case.graders)


__all__ = ["effective_graders", "grader_hash", "plan_hash"]
