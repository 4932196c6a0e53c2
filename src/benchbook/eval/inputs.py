"""Building what a harness may see: a :class:`CaseInput` with every gold field left out.

SPEC H.2: ``expected``, ``milestones``, the case's ``graders`` and the metadata keys the case
declares in ``gold_fields`` never leave the evaluation layer. This is the only place a
:class:`Case` becomes a :class:`CaseInput`.
"""

from __future__ import annotations

from benchbook.contracts.dataset import Case
from benchbook.contracts.run import CaseInput


def case_input(case: Case, sample: int, timeout_s: int | None = None) -> CaseInput:
    """The harness's view of ``case`` for repeat ``sample`` (0-based).

    Args:
        case: the full case, gold included.
        sample: the repeat index (≥ 0).
        timeout_s: a run-level per-case timeout in seconds replacing ``case.timeout_s``.
    """
    gold = set(case.gold_fields)
    return CaseInput(
        case_id=case.id,
        sample=sample,
        env=case.env,
        task=case.task,
        image=case.image,
        timeout_s=timeout_s or case.timeout_s,
        resources=case.resources,
        network=case.network,
        placement=case.placement,
        metadata={k: v for k, v in case.metadata.items() if k not in gold},
    )
