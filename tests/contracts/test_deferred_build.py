"""Every contract model is built on first use (``defer_build``), not at import.

A CLI process imports ~110 contract models and validates a handful; building all of them at
import cost ~0.05 s of every ``benchbook`` command (``docs/benchmarks.md``, CLI start-up).
"""

from __future__ import annotations

import importlib
import pkgutil

import pydantic

import benchbook.contracts


def _contract_models() -> list[type[pydantic.BaseModel]]:
    models = []
    for info in pkgutil.iter_modules(benchbook.contracts.__path__):
        module = importlib.import_module(f"benchbook.contracts.{info.name}")
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, pydantic.BaseModel)
                and value.__module__ == module.__name__
            ):
                models.append(value)
    return models


def test_every_contract_model_defers_its_build() -> None:
    models = _contract_models()
    assert len(models) > 100
    assert [m.__qualname__ for m in models if not m.model_config.get("defer_build")] == []


def test_a_deferred_model_validates_and_serializes_on_first_use() -> None:
    from benchbook.contracts.diff import DiffSummary

    summary = DiffSummary.model_validate({"added": 1, "removed": 0, "changed": 2, "unchanged": 3})
    assert DiffSummary.__pydantic_complete__
    assert summary.model_dump() == {"added": 1, "removed": 0, "changed": 2, "unchanged": 3}
