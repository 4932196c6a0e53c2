"""The registered nouns' table (``transports.nouns``, issue 32): every operation each transport
builds from it is a public service operation, and the store knows which nouns tombstone."""

from __future__ import annotations

import pytest

from benchbook.services.registry import OPERATIONS
from benchbook.store.harnesses import HARNESSES as HARNESS_TABLE
from benchbook.store.recipes import RECIPES as RECIPE_TABLE
from benchbook.store.registered_code import code_table
from benchbook.transports.nouns import ENVIRONMENTS, GRADERS, HARNESSES, RECIPES, NounOperations

NOUNS = [HARNESSES, RECIPES, GRADERS, ENVIRONMENTS]


@pytest.mark.parametrize("noun", NOUNS, ids=lambda n: n.name)
def test_each_noun_operation_is_a_registered_operation(noun: NounOperations) -> None:
    functions = [noun.register, noun.list, noun.get] + ([noun.delete] if noun.deletable else [])
    assert all(OPERATIONS.get(f.__name__) is f for f in functions)


def test_only_recipes_have_no_delete_and_no_tombstones() -> None:
    assert [n.name for n in NOUNS if n.delete is None] == ["recipe"]
    assert f"delete_{RECIPES.name}_version" not in OPERATIONS
    assert not RECIPE_TABLE.tombstones
    assert HARNESS_TABLE.tombstones and code_table("grader").tombstones
