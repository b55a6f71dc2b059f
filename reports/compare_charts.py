"""The compare page's chart, from the compare document alone: each arm's change against the baseline.

A forest-style plot: one row per rate measure, one dot with its 95 % interval per arm
(side by side, coloured by arm), and no difference as a line. It is oriented so that
better is always to the right: a measure where lower is better (``forbidden@K``,
``false_abstention``) is drawn with its sign flipped, and its label says so. The dot's
shape is what the sign test decided (the table's ▲ / ▼). Counts (``avg_k``) live on
another scale and stay in the tables. Flipping the sign is presentation; every number
comes from the document (:mod:`tooldisc.evaluation.bootstrap` drew the intervals).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tooldisc.reports.blocks import Chart

# Okabe–Ito without its vermillion, bluish green and yellow: arms are never read as
# "bad" or "good" by their colour, and every one shows on white. Beyond six arms the
# colours repeat (the legend and the tables still name each).
ARM_COLORS = ("#0072B2", "#E69F00", "#56B4E9", "#CC79A7", "#000000", "#999999")
BETTER, WORSE = "significantly better", "significantly worse"
ONE_WAY, SAME = "one-way (safety)", "not shown different"
SHAPES = ((BETTER, "triangle-up"), (WORSE, "triangle-down"), (ONE_WAY, "diamond"), (SAME, "circle"))
COUNTS = ("avg_k",)


def arm_colors(names: list[str]) -> tuple[tuple[str, str], ...]:
    """Each compared arm's colour, in arm order (the baseline is the zero line, not a colour)."""
    return tuple((n, ARM_COLORS[i % len(ARM_COLORS)]) for i, n in enumerate(names))


def _decided(marker: str) -> str:
    if "▼" in marker:
        return WORSE
    if "▲" in marker:
        return BETTER
    return ONE_WAY if "!" in marker else SAME


def delta_chart(doc: Mapping[str, Any]) -> Chart | None:
    """Every arm's change of every rate measure with its interval; None when no measure has one."""
    names = [a["name"] for a in doc["arms"]]
    two = len(names) == 2
    rows: list[dict[str, Any]] = []
    for r in doc["table"]:
        if r["measure"].split("@", 1)[0] in COUNTS:
            continue
        flip = r["better"] == "lower"
        label = r["measure"] + ("|(lower is better, flipped)" if flip else "")
        for i in range(1, len(names)):
            d, lo, hi = r["delta"][i], r["delta_low"][i], r["delta_high"][i]
            if d is None or lo is None or hi is None:
                continue
            sign = -1.0 if flip else 1.0
            ends = sorted((sign * lo, sign * hi))
            rows.append({"measure": label, "arm": "B" if two else names[i], "est": sign * d + 0.0,
                         "low": ends[0] + 0.0, "high": ends[1] + 0.0, "decided": _decided(r["markers"][i])})
    if not rows:
        return None
    present = {row["decided"] for row in rows}
    title = ("B − A per measure, with 95 % intervals" if two else
             f"Each arm − {doc['baseline']} per measure, with 95 % intervals")
    level = doc.get("bootstrap", {})
    note = (f"Dots are the change in the mean, bars its 95 % interval (a paired bootstrap over queries, "
            f"{level.get('resamples', 0):,} resamples, seed {level.get('seed', 0)}); right is better for the "
            "arm, so a measure where lower is better is drawn with its sign flipped. The shape is the sign "
            "test's verdict (Holm-corrected), which decides; one-way: a safety measure made worse on some query "
            "and better on none. The intervals are per measure, not corrected.")
    return Chart("interval", tuple(rows), x="est", y="measure", color="arm", title=title,
                 x_title="change against the baseline (→ better)", y_title="measure", ref=0.0,
                 shape="decided", shapes=tuple(s for s in SHAPES if s[0] in present),
                 colors=arm_colors(["B"] if two else names[1:]), note=note)
