"""The two compiled forms of the query loops, for tests that run each beside the numpy form.

``numba`` (the ``fast`` extra) compiles the loops of discovery/kernels/loops.py either ahead of time
(the module ``tooldisc kernels build`` writes, :mod:`tooldisc.discovery.kernels.aot`) or by
its JIT. A process takes the first when it is built, so without this the JIT form would go
untested wherever the module exists, and the ahead-of-time one wherever it does not.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType

import pytest

from tooldisc.discovery import kernels as k
from tooldisc.discovery.kernels import Kernels

FORMS = ("aot", "jit")
needs_numba = pytest.mark.skipif(importlib.util.find_spec("numba") is None,
                                 reason="the fast extra (numba) is not installed")


def aot_module() -> ModuleType:
    """The ahead-of-time module matching these sources; skip without it (fail under CI=true: make install builds it)."""
    from tooldisc.discovery.kernels.aot import load, status

    module = load()
    if module is None:
        found = status()
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but the query loops are not compiled ahead of time ({found.reason}): "
                        "'make install' runs 'tooldisc kernels build'")
        pytest.skip(f"the query loops are not compiled ahead of time: {found.reason}")
    return module


@contextmanager
def numba_form(form: str) -> Iterator[Kernels]:
    """Inside, ``kernels("numba")`` (and ``auto`` on a large index) gives the numba loops in ``form``."""
    chosen = k.numba_kernels(aot_module() if form == "aot" else None)
    assert chosen.form == form
    saved = k._compiled
    k._compiled = lambda: chosen  # type: ignore[assignment]
    try:
        yield chosen
    finally:
        k._compiled = saved
