"""Charts for standalone HTML reports: Vega-Lite (altair) rendered to inline SVG.

Reports are opened from CI artifacts and mail attachments, often offline, so a chart
is drawn at write time by ``vl_convert`` and embedded as SVG markup; page structure
comes from :mod:`tooldisc.reports.html`. The SVG's namespace attributes are the only
URLs it contains and HTML5 does not need them, so they are removed; text that quotes
a URL is neutralised by :func:`esc`. altair and vl_convert are imported only when a
chart is drawn, keeping the CLI fast.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from typing import Any

_XMLNS = re.compile(r'\s+xmlns(:\w+)?="[^"]*"')
_SCHEME = re.compile(r"([hH])([tT][tT][pP])")


def esc(value: Any) -> str:
    """HTML-escaped text of ``value`` (None → empty).

    Text may quote a URL (a gold query can); its first letter becomes a character
    reference, which displays the same but leaves the file free of anything a
    scanner or a browser could take for a link to fetch.
    """
    if value is None:
        return ""
    return _SCHEME.sub(lambda m: f"&#{ord(m.group(1))};{m.group(2)}", html.escape(str(value), quote=True))


def svg(spec: Any) -> str:
    """An altair chart or Vega-Lite dict → inline SVG markup without namespace URLs."""
    import vl_convert

    as_dict = spec.to_dict() if hasattr(spec, "to_dict") else dict(spec)
    as_dict.pop("$schema", None)
    out = vl_convert.vegalite_to_svg(as_dict)
    out = _XMLNS.sub("", out)
    return _SCHEME.sub(lambda m: f"&#{ord(m.group(1))};{m.group(2)}", out)  # labels may quote URLs too


def line_chart(rows: Sequence[Mapping[str, Any]], *, x: str, y: str, color: str | None = None,
               title: str, x_title: str | None = None, y_title: str | None = None,
               width: int = 420, height: int = 260) -> str:
    """A line chart with points as inline SVG; ``rows`` are records with fields x, y, color."""
    import altair as alt

    enc: dict[str, Any] = {
        "x": alt.X(f"{x}:Q", title=x_title or x),
        "y": alt.Y(f"{y}:Q", title=y_title or y),
    }
    if color:
        enc["color"] = alt.Color(f"{color}:N", title=None)
    chart = (alt.Chart(alt.Data(values=list(map(dict, rows))))
             .mark_line(point=True).encode(**enc)
             .properties(width=width, height=height, title=title))
    return svg(chart)


def bar_chart(rows: Sequence[Mapping[str, Any]], *, x: str, y: str, color: str | None = None,
              title: str, y_title: str | None = None, width: int = 520, height: int = 260) -> str:
    """Grouped vertical bars (categories on x, value on y) as inline SVG."""
    import altair as alt

    enc: dict[str, Any] = {
        "x": alt.X(f"{x}:N", title=None, sort=None),
        "y": alt.Y(f"{y}:Q", title=y_title or y),
    }
    if color:
        enc["color"] = alt.Color(f"{color}:N", title=None)
        enc["xOffset"] = alt.XOffset(f"{color}:N")
    chart = (alt.Chart(alt.Data(values=list(map(dict, rows))))
             .mark_bar().encode(**enc)
             .properties(width=width, height=height, title=title))
    return svg(chart)
