"""Tiny helpers for standalone HTML reports: escaping, tables, an interval chart in SVG.

Pages are self-contained: inline CSS, inline SVG, no script and no URL of any kind
(inline SVG in HTML5 needs no ``xmlns``), so a report opens offline and leaks
nothing. Output depends only on the inputs (fixed number formatting, no clock), so
reports are byte-identical across runs. Generic on purpose: eval reports reuse it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem;color:#222;max-width:72rem}
table{border-collapse:collapse;margin:0.5rem 0 1.5rem}
th,td{border:1px solid #ccc;padding:0.3rem 0.6rem;text-align:left;vertical-align:top}
th{background:#f3f3f3}
code{font-size:0.85em;white-space:pre-wrap}
.pass{color:#17692c}.fail{color:#b3261e;font-weight:bold}.not_judged{color:#8a5a00}.reported{color:#444}
.PROMOTE{color:#17692c}.HOLD{color:#8a5a00}.ROLLBACK{color:#b3261e}
""".strip()

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd")


def esc(value: object) -> str:
    return escape(str(value), quote=True)


def page(title: str, body: str) -> str:
    """A complete HTML document with inline CSS."""
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<title>{esc(title)}</title>\n<style>\n{CSS}\n</style>\n</head>\n<body>\n"
        f"{body}\n</body>\n</html>\n"
    )


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], raw: bool = False) -> str:
    """An HTML table; cells are escaped unless ``raw`` (caller-built markup)."""
    cell = (lambda c: c) if raw else esc
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "\n".join("<tr>" + "".join(f"<td>{cell(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody>\n</table>"


@dataclass(frozen=True)
class IntervalPoint:
    """One estimate with its interval, e.g. a per-arm rate and its Wilson bounds."""

    label: str
    series: str
    value: float
    low: float
    high: float


def interval_chart(points: Sequence[IntervalPoint], title: str, width: int = 640,
                   row_height: int = 22, x_max: float | None = None) -> str:
    """Horizontal dot-and-whisker chart as inline SVG (rows grouped by label)."""
    labels = list(dict.fromkeys(p.label for p in points))
    series = list(dict.fromkeys(p.series for p in points))
    left, right, top = 170, 20, 30
    plot_w = width - left - right
    hi = x_max if x_max is not None else max([p.high for p in points] + [1e-9]) * 1.1
    hi = hi if hi > 0 else 1.0
    rows_n = sum(1 for _ in points)
    height = top + rows_n * row_height + 40

    def x(v: float) -> float:
        return left + plot_w * min(max(v, 0.0), hi) / hi

    out = [f'<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
           f'role="img" aria-label="{esc(title)}">',
           f'<text x="{left}" y="18" font-size="13" font-weight="bold">{esc(title)}</text>']
    for i in range(5):
        v = hi * i / 4
        gx = x(v)
        out.append(f'<line x1="{gx:.2f}" y1="{top - 4}" x2="{gx:.2f}" y2="{top + rows_n * row_height}" '
                   'stroke="#e5e5e5"/>')
        out.append(f'<text x="{gx:.2f}" y="{top + rows_n * row_height + 14}" font-size="10" '
                   f'text-anchor="middle">{v:.3g}</text>')
    row = 0
    for label in labels:
        for p in (p for p in points if p.label == label):
            cy = top + row * row_height + row_height / 2
            color = PALETTE[series.index(p.series) % len(PALETTE)]
            out.append(f'<text x="{left - 8}" y="{cy + 4:.2f}" font-size="11" text-anchor="end">'
                       f'{esc(label)} · {esc(p.series)}</text>')
            out.append(f'<line x1="{x(p.low):.2f}" y1="{cy:.2f}" x2="{x(p.high):.2f}" y2="{cy:.2f}" '
                       f'stroke="{color}" stroke-width="2"/>')
            out.append(f'<circle cx="{x(p.value):.2f}" cy="{cy:.2f}" r="4" fill="{color}">'
                       f'<title>{esc(label)} {esc(p.series)}: {p.value:.4f} '
                       f'[{p.low:.4f}, {p.high:.4f}]</title></circle>')
            row += 1
    ly = top + rows_n * row_height + 30
    for j, s in enumerate(series):
        lx = left + j * 120
        out.append(f'<circle cx="{lx}" cy="{ly}" r="4" fill="{PALETTE[j % len(PALETTE)]}"/>')
        out.append(f'<text x="{lx + 8}" y="{ly + 4}" font-size="11">{esc(s)}</text>')
    out.append("</svg>")
    return "\n".join(out)
