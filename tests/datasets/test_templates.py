"""Row templates (SPEC E.3)."""

from __future__ import annotations

import pytest

from benchbook.datasets.templates import MissingField, compile_template
from benchbook.errors import InvalidInput


def test_a_field_is_replaced_by_its_value() -> None:
    assert compile_template("Q: {question}").render({"question": "2+2?"}) == "Q: 2+2?"


def test_dotted_paths_walk_into_objects_and_lists() -> None:
    row = {"a": {"b": "deep"}, "items": ["zero", {"name": "one"}]}
    template = compile_template("{a.b}|{items.0}|{items.1.name}")
    assert template.render(row) == "deep|zero|one"


def test_a_key_containing_a_dot_is_matched_whole_first() -> None:
    assert compile_template("{v1.2}").render({"v1.2": "x", "v1": {"2": "y"}}) == "x"


def test_an_optional_field_renders_empty_when_missing() -> None:
    assert compile_template("[{hint?}]").render({}) == "[]"


def test_a_missing_field_names_the_field() -> None:
    with pytest.raises(MissingField) as info:
        compile_template("{question} {context}").render({"question": "q"})
    assert info.value.field == "context"


def test_doubled_braces_are_literal() -> None:
    assert compile_template("{{x}} = {x}").render({"x": 1}) == "{x} = 1"


def test_values_are_never_re_expanded() -> None:
    assert compile_template("{a}").render({"a": "{b}", "b": "no"}) == "{b}"
    assert compile_template("{a} {b}").render({"a": "{b}", "b": "ok"}) == "{b} ok"


def test_values_render_as_json_text() -> None:
    row = {"n": 3, "f": 1.5, "t": True, "none": None, "obj": {"k": [1, 2]}}
    assert compile_template("{n} {f} {t} [{none}] {obj}").render(row) == (
        '3 1.5 true [] {"k":[1,2]}'
    )


@pytest.mark.parametrize("source", ["{open", "close}", "a {} b", "{?}"])
def test_an_unmatched_brace_or_empty_placeholder_is_invalid_input(source: str) -> None:
    with pytest.raises(InvalidInput) as info:
        compile_template(source, "mapping.task_template")
    assert "mapping.task_template" in info.value.message


def test_a_template_lists_its_fields() -> None:
    assert compile_template("{a} {b.c?} {{d}}").fields == ["a", "b.c"]
