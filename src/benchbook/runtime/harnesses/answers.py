"""The bound on one case's answer, whatever harness kind produced it: the same 16 MiB as a
``command`` harness's stdout. A larger answer (an ``answer: file`` harness's file, a ``python``
harness's return value, an ``agent``'s ``submit``, a model's reply) makes the case an error
naming the bound and the size seen, and nothing of the answer is stored."""

from __future__ import annotations

#: Bytes of one answer (UTF-8); also the stdout a ``command`` harness keeps.
ANSWER_LIMIT_BYTES = 16 * 1024 * 1024


def too_large(size: str, where: str = "the answer") -> str:
    """The case's error for an answer of ``size`` (``"314,572,800 bytes"``)."""
    return (
        f"{where} is too large: {size}, the limit is {ANSWER_LIMIT_BYTES:,} bytes (16 MiB);"
        " nothing of it was kept"
    )


def answer_problem(answer: str | None) -> str | None:
    """The error for an ``answer`` past :data:`ANSWER_LIMIT_BYTES` or holding NUL (U+0000,
    which PostgreSQL's text cannot store: a binary printed as the answer failed the whole run
    there), else None (never encodes more than four times the limit: a longer text is too
    large by its length alone)."""
    if answer is None:
        return None
    nul = answer.find("\x00")
    if nul >= 0:
        return (
            f"the answer holds a NUL character (U+0000) at character {nul:,}: not text (a binary"
            " output?); nothing of it was kept"
        )
    if len(answer) <= ANSWER_LIMIT_BYTES // 4:
        return None
    if len(answer) > ANSWER_LIMIT_BYTES:
        return too_large(f"{len(answer):,} characters")
    size = len(answer.encode("utf-8", "surrogatepass"))
    return too_large(f"{size:,} bytes") if size > ANSWER_LIMIT_BYTES else None
