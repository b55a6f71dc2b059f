"""A missing oracle package fails the oracle test under CI=true, and only skips elsewhere."""

from __future__ import annotations

import pytest

from tests.oracles import oracle

MISSING = "tooldisc_no_such_oracle_package"


def test_a_missing_oracle_fails_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true"):
        oracle(MISSING)


def test_a_missing_oracle_skips_outside_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="not installed"):
        oracle(MISSING)


def test_an_installed_oracle_is_returned() -> None:
    assert oracle("json").__name__ == "json"
