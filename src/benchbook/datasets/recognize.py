"""Recognising a source (issue 14): which catalog entry a file is, its default dataset id, and
the graders its answers suggest.

- :func:`match_catalog`: a catalog entry matches when every column its mapping names (id, task,
  answer, git, ref, start URL, image, test command, tag, gold and listed metadata columns; first
  segment of a dotted path) is among the source's fields, it names at least two, and every sampled
  row builds into a case with its mapping and hook (so GSM8K's ``#### 18`` pattern must match).
  Entries with their own file reader (ContextBench) are never matched: their files are not rows.
- :func:`dataset_id_from_name`: ``gsm8k_test.jsonl.gz`` → ``gsm8k``.
- :func:`guess_graders`: numeric answers → ``numeric``; other answers → ``answer-match``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from benchbook.contracts.dataset import GraderSpec
from benchbook.contracts.imports import CatalogMatch
from benchbook.contracts.recipe import Mapping
from benchbook.datasets.catalog import CatalogEntry, list_entries
from benchbook.datasets.mapping import CaseBuilder, case_row
from benchbook.datasets.mapping_rules import RowError
from benchbook.datasets.preview import describe_mapping
from benchbook.datasets.sources.base import Row
from benchbook.errors import InvalidInput

#: Words that name a split, not a benchmark: dropped from a file name's default dataset id.
SPLIT_WORDS = frozenset(
    {"train", "test", "testing", "dev", "val", "valid", "validation", "eval", "training", "split"}
)
_WORD = re.compile(r"[A-Za-z0-9]+")
_NUMBER = re.compile(r"^\s*[-+]?(\d[\d,]*\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$")


def mapping_columns(mapping: Mapping) -> set[str]:
    """The source columns a mapping names (first segment of dotted paths); templates excluded
    (their optional fields may be absent; the trial build checks the rest)."""
    named = [
        mapping.id_field,
        mapping.task_field,
        mapping.answer_field,
        mapping.git_field,
        mapping.ref_field,
        mapping.start_url_field,
        mapping.image_field,
        mapping.test_cmd_field,
        *mapping.tag_fields,
        *mapping.gold_fields,
        *(mapping.metadata_fields if isinstance(mapping.metadata_fields, list) else []),
    ]
    return {f.split(".", 1)[0] for f in named if f}


def _builds(entry: CatalogEntry, rows: Sequence[Row]) -> bool:
    recipe = entry.recipe
    try:
        builder = CaseBuilder(recipe.mapping, recipe.id, recipe.grader_templates, entry.hook)
        for index, row in enumerate(rows):
            case_row(builder, builder.build(index, row))
    except (RowError, ValueError, InvalidInput):
        return False
    return True


def match_catalog(fields: Sequence[str], rows: Sequence[Row]) -> list[CatalogMatch]:
    """The catalog entries these rows are an export of, most columns first (then by id).

    Args:
        fields: the source's columns (the union of the sampled rows' keys).
        rows: sampled rows (the preview's ≤ 20); each must build with the entry's mapping.

    Returns:
        ``[CatalogMatch]``, possibly empty; ``columns`` lists the columns the entry reads, sorted.
    """
    if not rows:
        return []
    have = set(fields)
    found: list[CatalogMatch] = []
    for entry in list_entries():
        if entry.file_source is not None:
            continue
        columns = mapping_columns(entry.recipe.mapping)
        if len(columns) < 2 or not columns <= have or not _builds(entry, rows):
            continue
        recipe = entry.recipe
        assertion, _ = describe_mapping(recipe.mapping, len(recipe.grader_templates))
        found.append(
            CatalogMatch(
                benchmark=entry.id,
                description=recipe.description,
                columns=sorted(columns),
                mapping=recipe.mapping,
                graders=[g.id for g in recipe.grader_templates]
                + [g.id for g in recipe.mapping.extra_graders],
                assertion=assertion,
            )
        )
    found.sort(key=lambda m: (-len(m.columns), m.benchmark))
    return found


def dataset_id_from_name(name: str | None) -> str | None:
    """A default dataset id from a file name: no extensions, no split words, words joined by
    ``-``, lower case (``GSM8K_test.jsonl.gz`` → ``gsm8k``). None when nothing is left
    (``test.jsonl``) or no name is given."""
    if not name:
        return None
    stem = name.rsplit("/", 1)[-1]
    if stem.lower().endswith(".gz"):
        stem = stem[:-3]
    stem = stem.rsplit(".", 1)[0] if "." in stem else stem
    words = [w.lower() for w in _WORD.findall(stem)]
    kept = [w for w in words if w not in SPLIT_WORDS and not re.fullmatch(r"first\d+", w)]
    return "-".join(kept)[:100] or None


def is_number(value: Any) -> bool:
    """Whether an answer is a number or numeric text (``18``, ``"1,000"``, ``"-2.5"``)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return True
    return isinstance(value, str) and bool(_NUMBER.match(value))


def guess_graders(expected: Iterable[Any]) -> list[GraderSpec]:
    """Graders for these expected answers: ``numeric`` (mode ``flexible-extract``) when every
    answer is a number, else ``answer-match`` (exact); none without answers."""
    values = [v for v in expected if v is not None]
    if not values:
        return []
    if all(is_number(v) for v in values):
        return [GraderSpec(id="numeric", config={"mode": "flexible-extract"})]
    return [GraderSpec(id="answer-match", config={"mode": "exact"})]
