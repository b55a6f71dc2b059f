"""The one entry to every report: ``render(document, kind, format)``.

Two tables meet here. ``KINDS`` maps a report kind to the function that says what its
document shows (a :class:`~tooldisc.reports.blocks.Report`); ``FORMATS`` maps a
format to the function that writes it. ``json`` writes the document itself, the
form every other format is derived from. A new format is one entry in ``FORMATS``
and works for every kind; a new kind is one entry in ``KINDS`` and gets every format.
Builders are imported when first used, so importing this module stays cheap.

``formats(kind)`` is where every command's allowed ``--format`` values come from: a kind in ``KINDS``
offers every format, a kind in ``PLAIN_KINDS`` ``table`` and ``json``. Every table a command prints is a
kind in ``KINDS``; ``PLAIN_KINDS`` holds only the commands whose text output is a line or two saying what
they did (``wrote …``, ``bucket``/``arm``, a status), which has no table to render in other formats.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import import_module
from typing import Any

from tooldisc.reports.blocks import Report

# kind → (module under tooldisc.reports, builder function)
KINDS: Mapping[str, tuple[str, str]] = {
    "eval": ("eval_report", "eval_report"),
    "sweep": ("eval_report", "sweep_report"),
    "compare": ("compare_report", "compare_report"),
    "gate": ("decisions", "gate_report"),  # the gate report, its decision first
    "verdict": ("canary_report", "verdict_report"),  # canary and shadow profiles alike
    "tune": ("tune_report", "tune_report"),
    "catalog-diff": ("catalog_diff_report", "catalog_diff_report"),
    "discover": ("run_report", "discover_report"),
    "plan": ("run_report", "plan_report"),
    "learn": ("run_report", "learn_report"),
    "bench": ("run_report", "bench_report"),
    "catalog-validate": ("data_report", "catalog_validate_report"),
    "catalog-stats": ("data_report", "catalog_stats_report"),
    "gold-validate": ("data_report", "gold_validate_report"),
    "gold-stats": ("data_report", "gold_stats_report"),
    "gold-split": ("data_report", "gold_split_report"),
    "canary-simulate": ("run_report", "canary_simulate_report"),
    "canary-ingest": ("data_report", "canary_ingest_report"),
}
# What prints no table, so has no report builder: ``table`` and ``json`` only. Each prints one or two lines
# saying what it did or found (``wrote …``, ``fused …``, ``bucket``/``arm``, the cache's or the compiled
# loops' place and state) or nothing on stdout (``canary synth`` notes on stderr; ``gold qrels --out -``
# prints the qrels file itself); a page of Markdown or HTML would only wrap that line.
PLAIN_KINDS: tuple[str, ...] = (
    "fuse", "catalog-convert", "gold-qrels", "kernels-status", "kernels-build", "cache-status",
    "cache-clear", "canary-assign", "canary-synth",
)


@dataclass(frozen=True)
class TextOptions:
    """What only the terminal format needs: its width, whether to emit colour, and whether its encoding holds
    only ASCII-compatible 8-bit text (a Latin-1 locale): boxes are then drawn in ASCII."""

    width: int = 100
    color: bool = False
    ascii: bool = False


def json_text(document: Any) -> str:
    """Stable JSON: sorted keys, UTF-8 kept, two-space indent, trailing newline."""
    return json.dumps(document, ensure_ascii=False, indent=2, sort_keys=True) + "\n"


def _json(document: Mapping[str, Any], _build: Callable[[], Report], _opts: TextOptions) -> str:
    return json_text(document)


def _markdown(_document: Mapping[str, Any], build: Callable[[], Report], _opts: TextOptions) -> str:
    from tooldisc.reports.markdown import write_markdown

    return write_markdown(build())


def _html(_document: Mapping[str, Any], build: Callable[[], Report], _opts: TextOptions) -> str:
    from tooldisc.reports.html import write_html

    return write_html(build())


def _table(_document: Mapping[str, Any], build: Callable[[], Report], opts: TextOptions) -> str:
    from tooldisc.reports.terminal import write_table

    return write_table(build(), width=opts.width, color=opts.color, ascii=opts.ascii)


FORMATS: Mapping[str, Callable[[Mapping[str, Any], Callable[[], Report], TextOptions], str]] = {
    "json": _json,
    "md": _markdown,
    "html": _html,
    "table": _table,
}


def formats(kind: str) -> tuple[str, ...]:
    """The formats a ``kind`` document prints in, as the command line lists them (``table`` first).

    The one source of every command's allowed ``--format`` values.
    """
    if kind in KINDS:
        return ("table", *(f for f in FORMATS if f != "table"))
    if kind in PLAIN_KINDS:
        return ("table", "json")
    raise ValueError(f"unknown report kind {kind!r}; known: {', '.join((*KINDS, *PLAIN_KINDS))}")


def builder(kind: str) -> Callable[[Mapping[str, Any]], Report]:
    """The function that turns a ``kind`` document into a :class:`Report`."""
    if kind not in KINDS:
        raise ValueError(f"unknown report kind {kind!r}; known: {', '.join(KINDS)}")
    module, name = KINDS[kind]
    return getattr(import_module(f"tooldisc.reports.{module}"), name)


def render(document: Mapping[str, Any], kind: str, fmt: str, *, width: int = 100, color: bool = False,
           ascii: bool = False) -> str:
    """``document`` (the JSON a command prints) as a ``kind`` report in ``fmt``.

    Pure: the same document gives the same bytes. ``width`` and ``color`` apply to
    the ``table`` format only (the CLI passes its terminal's), as does ``ascii``.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown report format {fmt!r}; known: {', '.join(FORMATS)}")
    build = builder(kind)
    return FORMATS[fmt](document, lambda: build(document), TextOptions(width, color, ascii))
