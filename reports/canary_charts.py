"""The canary page's two charts, from the verdict document alone.

* **Forest plot**: one row per guarded metric on a shared axis per kind (rate
  difference in points, latency ratio), the always-valid interval as a bar, the band
  from no difference to the margin shaded, each row coloured and labelled by outcome.
* **Sequential view**: each metric's interval at every hourly look of the window
  (the document's ``sequential``), the margin dashed and no difference solid.

Both are oriented so that harm is always the same way (right in the forest, up over
time): a drop in task success and a rise in fallbacks both read as "worse". Orienting
and scaling to points is presentation; every bound comes from the document
(:func:`tooldisc.canary.comparisons.rate_interval`, :mod:`tooldisc.canary.looks`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tooldisc.reports.blocks import Chart, Grid

# Okabe–Ito: distinguishable with any colour vision; the label says the outcome too.
OUTCOME_COLORS = (("non-inferior", "#0072B2"), ("inconclusive", "#E69F00"), ("worse", "#D55E00"))
OUTCOME_WORDS = {"non_inferior": "non-inferior", "inconclusive": "inconclusive", "worse": "worse"}
_KIND = {
    "difference": ("Rates: experiment vs control", "worse by (percentage points) →"),
    "ratio": ("Latency: experiment / control", "latency ratio, experiment / control (→ slower)"),
    "difference_ms": ("Latency: experiment − control", "slower by (ms) →"),
    "preference": ("Preference: B vs A (interleaved)", "B worse by (points of preference) →"),
}


def _oriented(kind: str, worse: str, values: Mapping[str, Any]) -> dict[str, float] | None:
    """Interval values turned so that harm grows rightwards/upwards; rates in points."""
    if any(values.get(k) is None for k in ("estimate", "low", "high", "limit")):
        return None
    scale = 100.0 if kind in ("difference", "preference") else 1.0
    sign = 1.0 if worse == "higher" else -1.0
    ends = sorted((sign * values["low"] * scale, sign * values["high"] * scale))
    return {"est": round(sign * values["estimate"] * scale, 6), "low": round(ends[0], 6),
            "high": round(ends[1], 6), "ref": 1.0 if kind == "ratio" else 0.0,
            "limit": round(sign * values["limit"] * scale, 6)}


def forest(d: Mapping[str, Any]) -> tuple[list[Chart], list[str]]:
    """One chart per kind of interval (rates; latency), and the metrics without one."""
    by_kind: dict[str, list[dict[str, Any]]] = {}
    missing = []
    for m in d.get("metrics", []):
        iv = m.get("interval")
        row = _oriented(iv["kind"], iv["worse"], iv) if iv else None
        if row is None or iv is None:
            missing.append(m["name"])
            continue
        outcome = OUTCOME_WORDS.get(m["outcome"], m["outcome"])
        by_kind.setdefault(iv["kind"], []).append({"metric": f"{m['name']}|({outcome})", "outcome": outcome, **row})
    charts = []
    for kind in ("difference", "ratio", "difference_ms", "preference"):
        if kind not in by_kind:
            continue
        title, x_title = _KIND[kind]
        charts.append(Chart("forest", tuple(by_kind[kind]), x="est", y="metric", color="outcome",
                            title=title, x_title=x_title, y_title="guarded metric (outcome)",
                            colors=OUTCOME_COLORS))
    return charts, missing


def _hour(h: float) -> str:
    return f"{h:g}"


def sequential(d: Mapping[str, Any]) -> Grid | None:
    """A small chart per guarded metric: its interval at each hourly look."""
    seq = d.get("sequential") or {}
    looks = seq.get("looks") or []
    if not looks:
        return None
    outcome = {m["name"]: OUTCOME_WORDS.get(m["outcome"], m["outcome"]) for m in d.get("metrics", [])}
    colors = dict(OUTCOME_COLORS)
    charts = []
    order = [m["name"] for m in d.get("metrics", [])]
    for name, s in sorted(seq["metrics"].items(), key=lambda kv: (order.index(kv[0]) if kv[0] in order else len(order), kv[0])):
        rows = []
        for look, iv in zip(looks, s["intervals"], strict=True):
            row = _oriented(s["kind"], s["worse"], iv) if iv else None
            if row is not None:
                rows.append({"hours": look["hours"], **row})
        if not rows:
            continue
        parts = [f"within the margin from hour {_hour(s['non_inferior_from'])}" if s["non_inferior_from"] is not None
                 else "not within the margin yet"]
        if s["beyond_zero_from"] is not None:
            parts.append(f"past no difference from hour {_hour(s['beyond_zero_from'])}")
        word = outcome.get(name, "inconclusive")
        charts.append(Chart("band", tuple(rows), x="hours", y="est", title=f"{name}: {'; '.join(parts)}",
                            x_title="hours into the window", y_title=_KIND[s["kind"]][1].replace(" →", " ↑"),
                            colors=((word, colors.get(word, "#0072B2")),)))
    step = seq.get("step_hours", 1)
    return Grid(tuple(charts), "Hour by hour", (
        f"The interval at each look (every {step:g} h, from the first hour both arms had "
        f"{seq.get('min_requests_per_arm', 500):,} requests): the band is the always-valid interval, "
        "the dashed line the margin, the solid line no difference; up is worse. Latency bounds here "
        "come from a histogram (bins at most 1.6 % wide), so they can differ slightly from the "
        "exact bounds in the plot above."))
