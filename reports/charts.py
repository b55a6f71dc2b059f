"""The one chart system: Vega-Lite specs built with altair, drawn to inline SVG by vl_convert.

Reports are opened offline, so a chart is drawn at write time and embedded as SVG
markup. The SVG's ``xmlns`` attributes are the only URLs vl_convert writes and HTML5
does not need them, so they are removed; labels are SVG text (control characters
shown as codes), so data that quotes a URL stays text. altair and vl_convert are imported only when a chart is drawn,
keeping the CLI fast.

Every chart has a title and both axes titled, keeps its ``viewBox`` and is drawn at
``width: 100%`` (never wider than it was drawn), so it shrinks with a phone's screen;
axis labels that would collide are dropped (Vega's ``labelOverlap``) and quantitative
axes carry few ticks, so two numbers never print into one.
"""

from __future__ import annotations

import re
from typing import Any

from tooldisc.reports.blocks import Chart
from tooldisc.reports.escape import html_text, visible

_XMLNS = re.compile(r'\s+xmlns(:\w+)?="[^"]*"')
_ROOT_SIZE = re.compile(r'^<svg([^>]*?) width="([0-9.]+)" height="([0-9.]+)"')
_PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
# Shared look: no colliding labels, a readable font size once scaled to a phone.
_CONFIG: dict[str, Any] = {
    "axis": {"labelOverlap": "greedy", "labelFontSize": 12, "titleFontSize": 12, "labelLimit": 220},
    "title": {"fontSize": 14, "anchor": "start", "limit": 560},
    "legend": {"labelFontSize": 12, "titleFontSize": 12, "orient": "bottom", "direction": "horizontal"},
}


def svg(spec: Any, title: str = "") -> str:
    """An altair chart or Vega-Lite dict → inline SVG markup without namespace URLs,
    scaled to its container (``viewBox`` kept, ``width="100%"``, at most its drawn width)
    and named for screen readers by ``title``."""
    import vl_convert

    # altair validates a spec against the whole Vega-Lite schema on to_dict (~0.3 s a chart);
    # these specs are built here, from typed blocks, and vl_convert reports any error itself
    as_dict = spec.to_dict(validate=False) if hasattr(spec, "to_dict") else dict(spec)
    as_dict.pop("$schema", None)
    drawn = _XMLNS.sub("", vl_convert.vegalite_to_svg(as_dict))
    return _ROOT_SIZE.sub(lambda m: f'<svg{m.group(1)} width="100%" style="max-width:{m.group(2)}px" '
                                    f'role="img" aria-label="{html_text(title)}"', drawn, count=1)


def _configured(spec: Any) -> Any:
    return (spec.configure_axis(**_CONFIG["axis"]).configure_title(**_CONFIG["title"])
            .configure_legend(**_CONFIG["legend"]))


def chart_svg(chart: Chart) -> str:
    """Draw a :class:`~tooldisc.reports.blocks.Chart` block."""
    import altair as alt

    data = alt.Data(values=[{k: visible(v) if isinstance(v, str) else v for k, v in r.items()} for r in chart.rows])
    color = None
    if chart.color:
        scale = (alt.Scale(domain=[k for k, _ in chart.colors], range=[v for _, v in chart.colors])
                 if chart.colors else alt.Scale(range=_PALETTE))
        color = alt.Color(f"{chart.color}:N", title=None, scale=scale)
    if chart.mark == "interval":
        spec = _interval(alt, data, chart, color)
    elif chart.mark == "forest":
        spec = _forest(alt, data, chart, color)
    elif chart.mark == "band":
        spec = _band(alt, data, chart)
    else:
        enc: dict[str, Any] = {}
        if chart.mark == "line":
            enc["x"] = alt.X(f"{chart.x}:Q", title=chart.x_title or chart.x, axis=alt.Axis(tickCount=8))
            base = alt.Chart(data).mark_line(point=True)
        else:
            # every category keeps its label: turned enough that neighbours never overlap
            enc["x"] = alt.X(f"{chart.x}:N", title=chart.x_title or chart.x, sort=None,
                             axis=alt.Axis(labelAngle=-45, labelOverlap=False, labelLimit=140))
            base = alt.Chart(data).mark_bar()
            if color is not None:
                enc["xOffset"] = alt.XOffset(f"{chart.color}:N", sort=None)
        enc["y"] = alt.Y(f"{chart.y}:Q", title=chart.y_title or chart.y, axis=alt.Axis(tickCount=5))
        if color is not None:
            enc["color"] = color
        width = 420 if chart.mark == "line" else 520
        spec = base.encode(**enc).properties(width=width, height=260, title=chart.title)
    return svg(_configured(spec), chart.title)


def _interval(alt: Any, data: Any, chart: Chart, color: Any) -> Any:
    """Dot-and-whisker rows: ``x`` with a rule from ``low`` to ``high`` per ``y`` (and ``color``),
    a line at ``ref`` (no difference) when given, the dot's form from ``shape``."""
    scale = alt.Scale(domain=[0, chart.x_max]) if chart.x_max is not None else alt.Scale(zero=True)
    # a label "name|note" is drawn on two lines, so long names fit a narrow screen
    y = alt.Y(f"{chart.y}:N", title=chart.y_title or chart.y, sort=None,
              axis=alt.Axis(labelExpr="split(datum.label, '|')", labelLimit=200))
    enc: dict[str, Any] = {"y": y}
    if color is not None:
        enc["color"] = color
        enc["yOffset"] = alt.YOffset(f"{chart.color}:N", sort=None)
    whisker = alt.Chart(data).mark_rule(strokeWidth=2).encode(
        x=alt.X("low:Q", title=chart.x_title or chart.x, scale=scale, axis=alt.Axis(tickCount=5)),
        x2="high:Q", **enc)
    dot_enc = dict(enc)
    if chart.shape:
        shapes = (alt.Scale(domain=[k for k, _ in chart.shapes], range=[v for _, v in chart.shapes])
                  if chart.shapes else alt.Undefined)
        dot_enc["shape"] = alt.Shape(f"{chart.shape}:N", title=None, scale=shapes)
    dot = alt.Chart(data).mark_point(filled=True, size=70, opacity=1).encode(
        x=alt.X(f"{chart.x}:Q", scale=scale), **dot_enc)
    layers = [whisker, dot]
    if chart.ref is not None:
        ref = alt.Chart(alt.Data(values=[{"ref": chart.ref}])).mark_rule(color="#333333", strokeWidth=1.5)
        layers.insert(0, ref.encode(x=alt.X("ref:Q", scale=scale)))
    # each row holds a two-line label and one whisker per colour, never squeezed so labels collide
    per_row = max(36, 16 * len({r.get(chart.color or "", "") for r in chart.rows}))
    height = per_row * len({r[chart.y] for r in chart.rows})
    return alt.layer(*layers).properties(width=400, height=height, title=chart.title)


def _forest(alt: Any, data: Any, chart: Chart, color: Any) -> Any:
    """One row per ``y``: the band from ``ref`` (no difference, a line) to ``limit`` (the
    margin) shaded, the interval ``low``–``high`` as a bar and ``x`` as a dot, coloured by
    ``color``; every row on one shared axis."""
    # a label "name|outcome" is drawn on two lines, so long names fit a narrow screen
    y = alt.Y(f"{chart.y}:N", title=chart.y_title or chart.y, sort=None,
              axis=alt.Axis(labelExpr="split(datum.label, '|')", labelFontSize=12, labelLimit=200))
    x_axis = alt.X("low:Q", title=chart.x_title or chart.x, axis=alt.Axis(tickCount=6),
                   scale=alt.Scale(zero=False, nice=True))
    base = alt.Chart(data)
    enc: dict[str, Any] = {"color": color} if color is not None else {}
    band = base.mark_rect(color="#d9e2ea", opacity=0.9).encode(x=alt.X("ref:Q"), x2="limit:Q", y=y)
    ref = base.mark_rule(color="#333333", strokeWidth=1.5).encode(x=alt.X("ref:Q"))
    bar = base.mark_rule(strokeWidth=4).encode(x=x_axis, x2="high:Q", y=y, **enc)
    dot = base.mark_point(filled=True, size=80, opacity=1).encode(x=alt.X(f"{chart.x}:Q"), y=y, **enc)
    return (band + ref + bar + dot).properties(width=360, height=44 * len(chart.rows), title=chart.title)


def _band(alt: Any, data: Any, chart: Chart) -> Any:
    """``y`` over ``x`` inside its ``low``–``high`` band, with ``ref`` (no difference) as a
    solid line and ``limit`` (the margin) dashed."""
    hue = chart.colors[0][1] if chart.colors else _PALETTE[0]
    x = alt.X(f"{chart.x}:Q", title=chart.x_title or chart.x, axis=alt.Axis(tickCount=6))
    base = alt.Chart(data)
    area = base.mark_area(color=hue, opacity=0.25).encode(
        x=x, y=alt.Y("low:Q", title=chart.y_title or chart.y, axis=alt.Axis(tickCount=5),
                     scale=alt.Scale(zero=False, nice=True)), y2="high:Q")
    line = base.mark_line(color=hue, point=alt.OverlayMarkDef(color=hue, size=18)).encode(x=x, y=f"{chart.y}:Q")
    ref = base.mark_line(color="#333333", strokeWidth=1.5).encode(x=x, y="ref:Q")
    limit = base.mark_line(color="#333333", strokeDash=[6, 4], strokeWidth=1.5).encode(x=x, y="limit:Q")
    return (area + limit + ref + line).properties(width=380, height=170, title=chart.title)
