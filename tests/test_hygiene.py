"""Suite hygiene (issue 14 item 15): a missing browser-test dependency fails under ``CI=true``
instead of skipping the suites that need it."""

from __future__ import annotations

import pytest

from tests import conftest


def test_a_missing_test_dependency_fails_under_ci_and_skips_locally(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(conftest, "IN_CI", True)
    with pytest.raises(pytest.fail.Exception, match="required under CI=true"):
        conftest.import_or_need("no_such_module_for_benchbook")
    monkeypatch.setattr(conftest, "IN_CI", False)
    with pytest.raises(pytest.skip.Exception, match="no_such_module_for_benchbook"):
        conftest.import_or_need("no_such_module_for_benchbook")
    assert conftest.import_or_need("json").dumps([1]) == "[1]"
