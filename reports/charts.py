"""The one chart system: Vega-Lite specs built with altair, drawn to inline SVG by vl_convert.

Reports are opened offline, so a chart is drawn at write time and embedded as SVG
markup. The SVG's ``xmlns`` attributes are the only URLs vl_convert writes and HTML5
does not need them, so they are removed; labels are SVG text (control characters
shown as codes), so data that quotes a URL stays text. altair and vl_convert are imported only when a chart is drawn,
keeping the CLI fast.
"""

from __future__ import annotations

import re
from typing import Any

from tooldisc.reports.blocks import Chart
from tooldisc.reports.escape import visible

_XMLNS = re.compile(r'\s+xmlns(:\w+)?="[^"]*"')
_PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]


def svg(spec: Any) -> str:
    """An altair chart or Vega-Lite dict → inline SVG markup without namespace URLs."""
    import vl_convert

    as_dict = spec.to_dict() if hasattr(spec, "to_dict") else dict(spec)
    as_dict.pop("$schema", None)
    return _XMLNS.sub("", vl_convert.vegalite_to_svg(as_dict))


def chart_svg(chart: Chart) -> str:
    """Draw a :class:`~tooldisc.reports.blocks.Chart` block."""
    import altair as alt

    data = alt.Data(values=[{k: visible(v) if isinstance(v, str) else v for k, v in r.items()} for r in chart.rows])
    color = alt.Color(f"{chart.color}:N", title=None, scale=alt.Scale(range=_PALETTE)) if chart.color else None
    if chart.mark == "interval":
        spec = _interval(alt, data, chart, color)
    else:
        enc: dict[str, Any] = {}
        if chart.mark == "line":
            enc["x"] = alt.X(f"{chart.x}:Q", title=chart.x_title or chart.x)
            base = alt.Chart(data).mark_line(point=True)
        else:
            enc["x"] = alt.X(f"{chart.x}:N", title=chart.x_title, sort=None)
            base = alt.Chart(data).mark_bar()
            if color is not None:
                enc["xOffset"] = alt.XOffset(f"{chart.color}:N", sort=None)
        enc["y"] = alt.Y(f"{chart.y}:Q", title=chart.y_title or chart.y)
        if color is not None:
            enc["color"] = color
        width = 420 if chart.mark == "line" else 520
        spec = base.encode(**enc).properties(width=width, height=260, title=chart.title)
    return svg(spec)


def _interval(alt: Any, data: Any, chart: Chart, color: Any) -> Any:
    """Dot-and-whisker rows: ``x`` with a rule from ``low`` to ``high`` per ``y`` (and ``color``)."""
    scale = alt.Scale(domain=[0, chart.x_max]) if chart.x_max is not None else alt.Scale(zero=True)
    y = alt.Y(f"{chart.y}:N", title=None, sort=None)
    enc: dict[str, Any] = {"y": y}
    if color is not None:
        enc["color"] = color
        enc["yOffset"] = alt.YOffset(f"{chart.color}:N", sort=None)
    whisker = alt.Chart(data).mark_rule(strokeWidth=2).encode(
        x=alt.X("low:Q", title=chart.x_title or chart.x, scale=scale), x2="high:Q", **enc)
    dot = alt.Chart(data).mark_point(filled=True, size=50).encode(
        x=alt.X(f"{chart.x}:Q", scale=scale),
        tooltip=[alt.Tooltip(f"{chart.y}:N"), alt.Tooltip(f"{chart.x}:Q", format=".4f"),
                 alt.Tooltip("low:Q", format=".4f"), alt.Tooltip("high:Q", format=".4f")], **enc)
    rows = len({(r[chart.y], r.get(chart.color or "", "")) for r in chart.rows})
    return (whisker + dot).properties(width=480, height=max(60, 22 * rows), title=chart.title)
