"""Preview helpers (SPEC E.3, E.4): field-role guesses and the one-sentence assertion.

Guesses, case-insensitive, first matching field in first-seen order, a field used once only:
id ``^id$`` then ``_id$``; task ``task|question|query|prompt|instruction|goal|problem``; answer
``answer|label|solution|target|gold|output``; start url ``start_?url|^url$|website``; git
``repo|git|clone_url``; ref ``base_commit|commit|ref|revision|sha``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from benchbook.contracts.recipe import Mapping
from benchbook.datasets.mapping_rules import resolve_env

_GUESSES: list[tuple[str, list[str]]] = [
    ("id_field", [r"^id$", r"_id$"]),
    ("task_field", [r"task|question|query|prompt|instruction|goal|problem"]),
    ("answer_field", [r"answer|label|solution|target|gold|output"]),
    ("start_url_field", [r"start_?url|^url$|website"]),
    ("git_field", [r"repo|git|clone_url"]),
    ("ref_field", [r"base_commit|commit|ref|revision|sha"]),
]


def union_fields(rows: Iterable[dict[str, Any]]) -> list[str]:
    """The union of the rows' keys in first-seen order."""
    seen: dict[str, None] = {}
    for row in rows:
        for key in row:
            seen.setdefault(key, None)
    return list(seen)


def guess_mapping(fields: list[str]) -> dict[str, Any]:
    """Guess field roles from names (SPEC E.4); returns mapping keys → field names.

    Patterns are tried in order (``^id$`` before ``_id$``); a field takes at most one role.
    """
    used: set[str] = set()
    guess: dict[str, Any] = {}
    for key, patterns in _GUESSES:
        for pattern in patterns:
            rx = re.compile(pattern, re.IGNORECASE)
            hit = next((f for f in fields if f not in used and rx.search(f)), None)
            if hit is not None:
                guess[key] = hit
                used.add(hit)
                break
    if "git_field" not in guess:
        guess.pop("ref_field", None)
    guess["env"] = "auto"
    return guess


def _q(name: str | None) -> str:
    return f"`{name}`"


def describe_mapping(mapping: Mapping, graders: int = 0) -> tuple[str, list[str]]:
    """The one-sentence assertion of how cases will run, plus warnings.

    Warnings name incomplete environments: a repo without a git field, files or path; os-use
    without an image; a browser without a start URL; no reference answer and no grader
    (``graders`` counts the recipe's grader templates).
    """
    env = resolve_env(mapping)
    task = (
        f"the template {mapping.task_template!r}"
        if mapping.task_template
        else f"each row's {_q(mapping.task_field)}"
    )
    warnings: list[str] = []
    if env == "prompt":
        where = f"The agent answers {task}"
    elif env == "browser":
        start = (
            f" starting at {_q(mapping.start_url_field)}"
            if mapping.start_url_field
            else f" starting at {mapping.start_url}"
            if mapping.start_url
            else ""
        )
        where = f"The agent works in a browser{start} on {task}"
        if not start:
            warnings.append("browser cases have no start URL; the agent starts on a blank page")
    elif env == "repo":
        where = f"The agent works in a repository ({_repo_words(mapping)}) on {task}"
        if not (mapping.git_field or mapping.repo_path or mapping.files_template):
            warnings.append("repo env without a git field, files or path: cases cannot be built")
    else:
        image = _q(mapping.image_field) if mapping.image_field else mapping.image
        where = f"The agent works on a desktop{f' in image {image}' if image else ''} on {task}"
        if not (mapping.image_field or mapping.image):
            warnings.append("os-use env without an image: the runner must supply the desktop")
    if mapping.answer_field:
        graded = f"the answer is graded against {_q(mapping.answer_field)}"
        if mapping.answer_pattern:
            graded += f" (the part matching {_q(mapping.answer_pattern)})"
    else:
        graded = "there is no reference answer, so graders or judges decide"
        if not (mapping.extra_graders or graders):
            warnings.append("no answer field: add a grader or judge to score these cases")
    return f"{where}; {graded}.", warnings


def _repo_words(mapping: Mapping) -> str:
    if mapping.git_field:
        at = f" at {_q(mapping.ref_field)}" if mapping.ref_field else " at HEAD"
        return f"cloned from {_q(mapping.git_field)}{at}"
    if mapping.files_template:
        return f"made of the files {', '.join(sorted(mapping.files_template))}"
    if mapping.repo_path:
        return f"at {mapping.repo_path} in the case image"
    return "with no source"
