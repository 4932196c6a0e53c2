"""Linear-time equivalents of the reference rules' regexes that backtrack quadratically.

The reference rules (lm-eval's GSM8K ``exact_match``, Minerva's ``normalize_final_answer``) are
written as Python regexes. Some of them, run by ``re`` on a long answer, try every start
position and scan to the end of the text (or line) from each: quadratic time, minutes to hours
for a megabyte answer, on a thread that holds the GIL. Each function here returns **exactly**
what its regex returns for every input (``tests/eval/test_linear_rules.py`` checks that with
hypothesis against the regex itself) in one pass. ``.`` without ``re.DOTALL`` matches any
character but ``"\\n"``, so the line-bound rules work line by line.
"""

from __future__ import annotations

import re

_WORD_CHAR = re.compile(r"\w")


def strip_through_last(text: str, marker: str) -> str:
    """``re.sub("(?s).*" + re.escape(marker), "", text)``: everything up to and including the
    **last** ``marker`` removed (the greedy match from 0; nothing of ``marker`` is left after
    it, so ``re.sub`` finds no second match); ``text`` unchanged when ``marker`` is absent."""
    at = text.rfind(marker)
    return text if at < 0 else text[at + len(marker) :]


def keep_between_dollars(text: str) -> str:
    r"""``re.sub(r"(.*?)(\$)(.*?)(\$)(.*)", "$\\3$", text)``: each line holding two ``$`` or
    more becomes ``$`` + the text between its first two ``$`` + ``$`` (a match starts at the
    line's start and its ``(.*)`` takes the rest of the line); other lines are kept."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        first = line.find("$")
        second = line.find("$", first + 1) if first >= 0 else -1
        if second >= 0:
            lines[i] = "$" + line[first + 1 : second] + "$"
    return "\n".join(lines)


def unwrap_lazy(text: str, command: str) -> str:
    r"""``re.sub(rf"(\\{command}\{{)(.*?)(\}})", "\\2", text)``: each ``\command{X}`` with
    ``X`` up to the first ``}`` of the same line becomes ``X``; an opening with no ``}`` after
    it on its line is kept (and so is every later opening on that line)."""
    opening = f"\\{command}{{"
    out: list[str] = []
    pos = 0
    while (at := text.find(opening, pos)) >= 0:
        start = at + len(opening)
        close = text.find("}", start)
        newline = text.find("\n", start)
        if close < 0:
            break
        if 0 <= newline < close:
            out.append(text[pos : newline + 1])
            pos = newline + 1
            continue
        out.append(text[pos:at] + text[start:close])
        pos = close + 1
    out.append(text[pos:])
    return "".join(out)


def unwrap_boxed_greedy(text: str) -> str:
    r"""``re.sub(r"(\\boxed\{)(.*)(\})", "\\2", text)``: on each line, from the first
    ``\boxed{`` to the **last** ``}`` after it on that line becomes what is between them."""
    opening = "\\boxed{"
    lines = text.split("\n")
    for i, line in enumerate(lines):
        at = line.find(opening)
        close = line.rfind("}")
        if at >= 0 and close >= at + len(opening):
            lines[i] = line[:at] + line[at + len(opening) : close] + line[close + 1 :]
    return "\n".join(lines)


def brace_sqrt_index(text: str) -> str:
    r"""``re.sub(r"(sqrt)(\[[^\]]*\])(\w)", "\\1\\2{\\3}", text)``: ``sqrt[I]c`` → ``sqrt[I]{c}``
    where ``I`` runs to the first ``]`` (across lines) and ``c`` is one word character."""
    out: list[str] = []
    pos = 0
    close = -1  # the first "]" after the last opening looked at, reused while it stays ahead
    while (at := text.find("sqrt[", pos)) >= 0:
        if close < at + 5:
            close = text.find("]", at + 5)
        if close < 0:
            break
        after = text[close + 1 : close + 2]
        if after and _WORD_CHAR.match(after):
            out.append(text[pos : close + 1] + "{" + after + "}")
            pos = close + 2
        else:
            out.append(text[pos : at + 1])
            pos = at + 1
    out.append(text[pos:])
    return "".join(out)


def search_lazy_sentence(text: str, prefix: str, suffix: str) -> str | None:
    """Group 1 of ``re.search(re.escape(prefix) + "(.*?)." + re.escape(suffix) + ".", text)``
    (the ``.`` unescaped: any character but a newline), or None when it does not match: the
    first ``prefix`` whose line holds, after it, one character, ``suffix`` and one more."""
    pos = 0
    while (at := text.find(prefix, pos)) >= 0:
        start = at + len(prefix)
        newline = text.find("\n", start)
        end = len(text) if newline < 0 else newline
        found = text.find(suffix, start + 1, end)
        if found >= 0 and found + len(suffix) < end:
            return text[start : found - 1]
        if newline < 0:
            return None
        pos = newline + 1
    return None
