"""Generated GSM8K-like JSONL: ``{"question": …, "answer": "… #### n"}`` per line.

Rows are deterministic in their line index, unique (every row mentions its index), and about the
size of real GSM8K test rows (~550 bytes). ``changed_every=k`` rewrites the question of every
k-th row (k=100 → 1% changed), keeping the row count, so positional ids line up for a diff.
Files go to a temporary folder chosen by the caller; nothing here is committed.
"""

from __future__ import annotations

from pathlib import Path

import orjson

_NAMES = ("Janet", "Josh", "Mia", "Carlos", "Aiko", "Noor", "Ben", "Priya", "Tomas", "Lena")
_ITEMS = ("eggs", "apples", "bolts of fiber", "books", "marbles", "tickets", "pencils", "cups")
_FILLER = (
    "She checks the numbers twice before writing anything down, because the market opens early"
    " and every customer wants to know the total before paying."
)


def gsm8k_row(i: int, changed: bool = False) -> dict[str, str]:
    """The i-th generated row (question with a number story, answer ending ``#### n``)."""
    name, item = _NAMES[i % len(_NAMES)], _ITEMS[(i // 10) % len(_ITEMS)]
    a, b, c = 10 + i % 89, 2 + (i * 7) % 13, 1 + (i * 13) % 7
    question = (
        f"Problem {i}: {name} has {a} {item} per day and uses {b} of them every morning."
        f" {_FILLER} {name} sells the rest for ${c} each."
        f" How many dollars does {name} make every day?"
    )
    if changed:
        question = question.replace("every morning", "every evening, twice")
    left = a - b
    answer = (
        f"{name} has {a} - {b} = <<{a}-{b}={left}>>{left} {item} left each day.\n"
        f"Selling them at ${c} each gives {left} * {c} = <<{left}*{c}={left * c}>>{left * c}"
        f" dollars every day at the market.\n#### {left * c}"
    )
    return {"question": question, "answer": answer}


def write_gsm8k_like(path: Path, rows: int, changed_every: int | None = None) -> Path:
    """Write ``rows`` generated rows to ``path`` (JSONL, ``\\n``-terminated); returns ``path``."""
    with path.open("wb") as out:
        buf: list[bytes] = []
        for i in range(rows):
            changed = changed_every is not None and i % changed_every == changed_every - 1
            buf.append(orjson.dumps(gsm8k_row(i, changed)))
            if len(buf) >= 10_000:
                out.write(b"\n".join(buf) + b"\n")
                buf.clear()
        if buf:
            out.write(b"\n".join(buf) + b"\n")
    return path
