"""The agent's system prompt per environment kind, and its first user message.

A harness's ``config.system`` replaces the template; the templates name the tools the case
offers, so a prompt never mentions a tool the model cannot call. The repo template asks for the
files the fix needed as the answer, one path a line: the ``localization`` grader reads that
answer as the predicted files, and the ``swe-bench``/``tests-pass`` graders read the diff.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import JsonValue

from benchbook.contracts.run import CaseInput

_COMMON = (
    "You work in a sandboxed workspace through tools ({tools}). Each tool call's result comes "
    "back as a tool message. When you are done, call submit(answer) exactly once: only the "
    "submitted answer counts."
)
TEMPLATES: dict[str, str] = {
    "repo": (
        "You are a software engineer. The workspace is a checkout of a repository; the user "
        "describes an issue. Find the cause in the code, fix the issue by editing the files, "
        "check your fix (run the relevant tests if you can), then submit the paths of the files "
        "the fix needed, one per line (your edits themselves are read from the repository). "
        + _COMMON
    ),
    "prompt": (
        "Answer the user's question. You may compute or check with the tools; then submit the "
        "answer in the form the question asks for. " + _COMMON
    ),
    "browser": (
        "A web browser is open for you; drive it with the browser tool to do the user's task, "
        "then submit what the task asks for. " + _COMMON
    ),
    "os-use": ("Do the user's task on the computer, then submit the result. " + _COMMON),
}


def system_prompt(override: str | None, env_kind: str, tools: Sequence[str]) -> str:
    """``override`` when set, else the template of ``env_kind`` (``prompt``'s for unknown
    kinds), naming ``tools``."""
    if override is not None:
        return override
    template = TEMPLATES.get(env_kind, TEMPLATES["prompt"])
    return template.format(tools=", ".join(tools))


def first_messages(
    override: str | None, case_input: CaseInput, tools: Sequence[str]
) -> list[dict[str, JsonValue]]:
    """``[system, user]``: the user message is the task, preceded by a prompt case's
    ``context`` and a blank line (as for the ``openai`` kind)."""
    env = case_input.env
    context = getattr(env, "context", None) if env.kind == "prompt" else None
    task = f"{context}\n\n{case_input.task}" if context else case_input.task
    return [
        {"role": "system", "content": system_prompt(override, env.kind, tools)},
        {"role": "user", "content": task},
    ]
