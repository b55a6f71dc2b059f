"""Words and numbers every canary page writes the same way: percents, hours, reasons, raw numbers.

Shared by the A/B and shadow pages (:mod:`.canary_report`, :mod:`.canary_decision`) and the
interleaving page (:mod:`.interleave_report`), so neither page imports the other for them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def pct(x: Any) -> str:
    """``10 %`` (as the issue and the ladder are written)."""
    return f"{x:g} %" if isinstance(x, int | float) else "?"


def hours_text(h: float | None) -> str:
    if h is None:
        return "an unknown time (the window has no duration)"
    if h < 1:
        return "under 1 h"
    return f"about {h:.0f} h" if h >= 10 else f"about {h:.1f} h"


def reason_rows(d: Mapping[str, Any]) -> list[list[str]]:
    """The quarantine reasons of a verdict document as ``[reason, rows]`` table rows."""
    q = d.get("quarantine") or {}
    return [[reason, str(n)] for reason, n in sorted(q.get("reasons", {}).items())]


def compact(numbers: dict[str, Any]) -> str:
    """A gate's numbers on one line (the pages' raw-numbers section)."""
    return json.dumps(numbers, sort_keys=True, ensure_ascii=False, separators=(", ", ": "))
