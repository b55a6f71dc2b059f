"""The independent implementations tests check tooldisc against, skipped only outside CI.

An oracle test that skips proves nothing, so a missing oracle package (they are all in the
``dev`` extra) fails under ``CI=true``, as the shared-data tests do (``tests/conftest.py``);
elsewhere it skips with the reason and the install line.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

import pytest


def oracle(name: str) -> ModuleType:
    """Import the oracle package ``name``; skip without it, or fail when ``CI=true``."""
    try:
        return importlib.import_module(name)
    except ImportError:
        why = f"the oracle package {name!r} is not installed (pip install -e '.[dev]')"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{why} but CI=true: CI must run the oracle tests", pytrace=False)
        pytest.skip(why, allow_module_level=True)
