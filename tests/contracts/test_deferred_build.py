"""Every contract model is built on first use (``defer_build``), not at import.

A CLI process imports ~110 contract models and validates a handful; building all of them at
import cost ~0.05 s of every ``benchbook`` command (``docs/benchmarks.md``, CLI start-up).
"""

from __future__ import annotations

import importlib
import pkgutil
import warnings
from pathlib import Path

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


#: Request bodies FastAPI takes as route parameters: built at class creation (STRICT_EAGER).
EAGER = {"Recipe", "StartRunRequest", "ReportRunRequest", "RegisteredGrader", "EnvironmentRecipe"}
EAGER |= {"ImportInspectRequest", "ImportLmEvalRequest"}


def test_every_contract_model_defers_its_build_but_route_bodies() -> None:
    models = _contract_models()
    assert len(models) > 100
    eager = {m.__qualname__ for m in models if not m.model_config.get("defer_build")}
    assert eager == EAGER


def test_openapi_generation_warns_about_nothing(tmp_path: Path) -> None:
    """A deferred model as a route's body parameter made FastAPI's OpenAPI generation emit
    pydantic ``UnsupportedFieldAttributeWarning`` (alias 'recipe'/'request')."""
    from benchbook.app import create_app
    from benchbook.settings import Settings

    app = create_app(Settings(home=tmp_path, run_worker=False))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        schema = app.openapi()
    assert "Recipe" in schema["components"]["schemas"]
    # A ResourceWarning is the garbage collector closing another test's connection meanwhile.
    said = [str(w.message)[:80] for w in caught if not issubclass(w.category, ResourceWarning)]
    assert said == []


def test_a_deferred_model_validates_and_serializes_on_first_use() -> None:
    from benchbook.contracts.diff import DiffSummary

    summary = DiffSummary.model_validate({"added": 1, "removed": 0, "changed": 2, "unchanged": 3})
    assert DiffSummary.__pydantic_complete__
    assert summary.model_dump() == {"added": 1, "removed": 0, "changed": 2, "unchanged": 3}
