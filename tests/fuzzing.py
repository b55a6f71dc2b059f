"""How many examples a fuzz property runs, by where it runs.

CI (``CI=true``) runs the counts the issues ask for; ``make fuzz`` (``TOOLDISC_FUZZ=1``)
runs larger ones; a developer's plain ``pytest`` runs a tenth of CI's so the edit-test
loop stays quick. Every fuzz property takes its count from here, so the three levels are
set in one place.
"""

from __future__ import annotations

import os


def examples(ci: int, fuzz: int | None = None, local: int | None = None) -> int:
    """``fuzz`` under ``make fuzz`` (default 10× ``ci``), ``ci`` under CI=true, else ``local`` (default ``ci // 10``)."""
    if os.environ.get("TOOLDISC_FUZZ") == "1":
        return fuzz if fuzz is not None else ci * 10
    if os.environ.get("CI") == "true":
        return ci
    return local if local is not None else max(ci // 10, 1)
