"""Standalone HTML pages with inline SVG charts: no script, no stylesheet link, no URL.

Reports are opened from CI artifacts and mail attachments, often offline, so the page
carries everything inline. Charts are Vega-Lite specs (built with altair) rendered
to SVG by ``vl_convert`` at write time; the SVG's namespace attributes are the only
URLs it contains and HTML5 does not need them, so they are removed. Both libraries
are imported only when a chart is drawn, keeping the CLI fast.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from typing import Any

_XMLNS = re.compile(r'\s+xmlns(:\w+)?="[^"]*"')
_SCHEME = re.compile(r"([hH])([tT][tT][pP])")

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem auto;max-width:1100px;color:#1f2328;padding:0 1rem}
h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #d0d7de}
table{border-collapse:collapse;margin:.5rem 0 1rem}th,td{border:1px solid #d0d7de;padding:.25rem .6rem;text-align:left;vertical-align:top}
th{background:#f6f8fa}td.num{text-align:right;font-variant-numeric:tabular-nums}
.note{color:#57606a;font-size:.9rem}.chart{margin:1rem 0}.bad{color:#cf222e}.good{color:#1a7f37}
"""


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


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], *, numeric: Sequence[bool] | None = None) -> str:
    """An HTML table; cells are escaped, numeric columns right-aligned."""
    numeric = numeric or [False] * len(headers)
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = []
    for row in rows:
        cells = "".join(
            f'<td class="num">{esc(c)}</td>' if numeric[i] else f"<td>{esc(c)}</td>" for i, c in enumerate(row)
        )
        body.append(f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def page(title: str, sections: Sequence[str]) -> str:
    """A complete standalone HTML document: inline CSS, sections in order, no URL."""
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<title>{esc(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
        f"<h1>{esc(title)}</h1>\n" + "\n".join(sections) + "\n</body>\n</html>\n"
    )
