"""Datasets the fake server serves by default, built from ``../shared/data`` (never copied)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from .model import FakeDataset

GATED_TOKEN = "hf_granted_token_for_tests"
GSM8K_ID = "openai/gsm8k"
PAGED_ID = "example-org/paged-250"
GATED_ID = "example-org/gated-bench"


def gsm8k(shared_data: Path) -> FakeDataset:
    """``openai/gsm8k`` config ``main`` split ``test``: the 1319 rows of ``gsm8k/test.jsonl``."""
    lines = (shared_data / "gsm8k" / "test.jsonl").read_bytes().splitlines()
    rows = [orjson.loads(line) for line in lines if line.strip()]
    features = {
        "question": {"dtype": "string", "_type": "Value"},
        "answer": {"dtype": "string", "_type": "Value"},
    }
    return FakeDataset(
        GSM8K_ID,
        splits={("main", "test"): rows},
        features={"main": features},
        files={"README.md": b"---\nlicense: mit\n---\n# GSM8K\n"},
    )


def paged_rows(count: int) -> list[dict[str, Any]]:
    """``count`` rows with an int id, text, a ClassLabel index, a list and a nested struct."""
    return [
        {
            "id": 100 + i,
            "question": f"Q{i}: what is {i} + {i}?",
            "answer": str(2 * i),
            "label": i % 3,
            "tags": ["even"] if i % 2 == 0 else [],
            "meta": {"level": i % 5, "source": {"page": i // 100}},
        }
        for i in range(count)
    ]


PAGED_FEATURES = {
    "id": {"dtype": "int64", "_type": "Value"},
    "question": {"dtype": "string", "_type": "Value"},
    "answer": {"dtype": "string", "_type": "Value"},
    "label": {"names": ["easy", "medium", "hard"], "_type": "ClassLabel"},
    "tags": {"feature": {"dtype": "string", "_type": "Value"}, "_type": "List"},
    "meta": {
        "level": {"dtype": "int64", "_type": "Value"},
        "source": {"page": {"dtype": "int64", "_type": "Value"}},
    },
}


def paged(short_page_at: int = 100, short_page_rows: int = 60) -> FakeDataset:
    """250 rows in ``default``/``train``, 100 per page, the page at ``short_page_at`` short."""
    return FakeDataset(
        PAGED_ID,
        splits={("default", "train"): paged_rows(250), ("default", "test"): paged_rows(3)},
        features={"default": PAGED_FEATURES},
        short_pages={short_page_at: short_page_rows},
    )


def gated() -> FakeDataset:
    """A click-through gated dataset; only ``GATED_TOKEN`` has accepted its terms."""
    rows = [
        {"task_id": f"t{i}", "Question": f"Gated question {i}?", "Final answer": str(i)}
        for i in range(5)
    ]
    csv = "task_id,Question,Final answer\n" + "".join(
        f"{r['task_id']},{r['Question']},{r['Final answer']}\n" for r in rows
    )
    return FakeDataset(
        GATED_ID,
        splits={("default", "validation"): rows},
        files={"data/validation.csv": csv.encode()},
        gated="auto",
        token=GATED_TOKEN,
    )


def viewerless(repo_id: str, files: dict[str, bytes]) -> FakeDataset:
    """A repository the viewer does not serve: ``/is-valid`` all false, raw files only."""
    return FakeDataset(
        repo_id, files={"README.md": b"# raw files\n", **files}, viewer=False, parquet=False
    )


def defaults(shared_data: Path) -> list[FakeDataset]:
    """gsm8k, the 250-row paged split and the gated dataset."""
    return [gsm8k(shared_data), paged(), gated()]
