"""Harness config templates (SPEC H.1): ``{task}``, ``{case_id}``, ``{workdir}``, ``{sample}``.

The syntax is the dataset templates' (:mod:`benchbook.datasets.templates`): ``{{``/``}}`` are
literal braces and values are inserted once, never re-expanded. Only the four fields of
:data:`~benchbook.contracts.harness.TEMPLATE_FIELDS` exist; :func:`check_harness_templates`
rejects anything else when a harness is registered, so rendering at run time cannot fail.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from benchbook.contracts.harness import (
    TEMPLATE_FIELDS,
    AnyHarness,
    CommandHarness,
)
from benchbook.contracts.run import CaseInput
from benchbook.datasets.templates import Template, compile_template
from benchbook.errors import InvalidInput


def command_templates(harness: CommandHarness) -> Iterator[tuple[str, str]]:
    """``(config path, template)`` for every templated value of a command harness."""
    config = harness.config
    for index, arg in enumerate(config.argv):
        yield f"config.argv[{index}]", arg
    if config.cwd is not None:
        yield "config.cwd", config.cwd
    for name, value in config.env.items():
        yield f"config.env.{name}", value


def compile_harness_template(source: str, where: str) -> Template:
    """Compile one harness template, checking its fields.

    Raises:
        InvalidInput: a brace error or a field outside ``TEMPLATE_FIELDS``, naming ``where``
            (``config.argv[1]: unknown template field 'answer' (known: task, case_id, …)``).
    """
    template = compile_template(source, where)
    for name in template.fields:
        if name not in TEMPLATE_FIELDS:
            known = ", ".join(TEMPLATE_FIELDS)
            problem = f"unknown template field {name!r} (known: {known})"
            raise InvalidInput(
                f"{where}: {problem}", {"errors": [{"path": where, "message": problem}]}
            )
    return template


def check_harness_templates(harness: AnyHarness) -> None:
    """Check every template of ``harness`` (only ``command`` harnesses have templates).

    Raises:
        InvalidInput: the first bad template, naming its config path and the problem.
    """
    if isinstance(harness, CommandHarness):
        for where, source in command_templates(harness):
            compile_harness_template(source, where)


def template_values(case_input: CaseInput, workdir: Path) -> dict[str, str | int]:
    """The values the four template fields take for one (case, sample)."""
    return {
        "task": case_input.task,
        "case_id": case_input.case_id,
        "workdir": str(workdir),
        "sample": case_input.sample,
    }


def render(source: str, where: str, values: dict[str, str | int]) -> str:
    """Render one harness template with :func:`template_values`' output.

    Raises:
        InvalidInput: the template is invalid (a harness registered without the check).
    """
    return compile_harness_template(source, where).render(values)
