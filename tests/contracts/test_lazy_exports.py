"""``benchbook.contracts`` exports its names lazily (issue 32 (d)): a submodule imports alone,
and every exported name still resolves to its module's class."""

from __future__ import annotations

import importlib
import subprocess
import sys

import benchbook.contracts as contracts


def test_every_exported_name_is_its_modules() -> None:
    for name in contracts.__all__:
        module = importlib.import_module(f"benchbook.contracts.{contracts._EXPORTS[name]}")
        assert getattr(contracts, name) is getattr(module, name)
    assert set(contracts.__all__) == set(contracts._EXPORTS) <= set(dir(contracts))


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        contracts.Nothing  # noqa: B018
    except AttributeError as exc:
        assert "has no attribute 'Nothing'" in str(exc)
    else:
        raise AssertionError("an unknown name resolved")


def test_importing_one_contract_module_builds_no_other() -> None:
    code = (
        "import sys; import benchbook.contracts.registry; "
        "print(sorted(m for m in sys.modules if m.startswith('benchbook.contracts.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "benchbook.contracts.recipe" not in out.stdout, out.stdout
    assert "benchbook.contracts.diff" not in out.stdout, out.stdout
