"""The reports on the files tooldisc reads: ``catalog validate``/``stats``, ``gold validate``/``stats``/``split``
and ``canary ingest`` (telemetry files loaded into DuckDB).

Each builder takes the document the command prints with ``--format json``. Their
terminal layout predates the report blocks and is kept byte for byte: no title line,
plain lines never wrapped (``Lines(wrap=False)``), and counts in text columns
(``Fields``/``Table`` with ``widths``); Markdown and HTML show the same content as
bullets, fields and tables.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tooldisc.reports.blocks import Block, Fields, Lines, Report, table

# --------------------------------------------------------------------------- shared


def counts_blocks(stats: Mapping[str, Any]) -> tuple[Block, ...]:
    """A (one-level nested) mapping of counts: each run of plain values one :class:`Fields`, each nested
    mapping one titled :class:`Fields` (in the terminal, ``name:`` and its counts indented under it)."""
    blocks: list[Block] = []
    plain: list[tuple[str, str]] = []
    for key, value in stats.items():
        if isinstance(value, Mapping):
            if plain:
                blocks.append(Fields(tuple(plain), widths=(34,)))
                plain = []
            blocks.append(Fields(tuple((str(k), str(v)) for k, v in value.items()), title=str(key), widths=(32, 6)))
        else:
            plain.append((str(key), "n/a" if value is None else str(value)))
    if plain:
        blocks.append(Fields(tuple(plain), widths=(34,)))
    return tuple(blocks)


def _issue_lines(doc: Mapping[str, Any], where: str, width: int) -> list[str]:
    """One line per issue, ``level file: place: message``, cut to an error line's budget."""
    from tooldisc.errors import MAX_ERROR_LINE
    from tooldisc.terminal import clip, escape

    return [clip(f"{i['level']:<{width}} {escape(': '.join(p for p in (i['file'], i[where], i['message']) if p))}",
                 MAX_ERROR_LINE) for i in doc["issues"]]


# --------------------------------------------------------------------------- catalog


def catalog_validate_report(doc: Mapping[str, Any]) -> Report:
    """Every issue of a catalog, then the verdict with its counts, then what the format cannot say."""
    c = doc["counts"]
    verdict = "OK" if doc["valid"] else "FAIL"
    tail = f", {doc['tools']} tools, catalog {doc['catalog_hash'][:16]}" if doc["tools"] is not None else ""
    lines = [*_issue_lines(doc, "path", 10),
             f"{verdict}: {doc['file']} ({doc['format']}): {c['error']} error(s), {c['quarantine']} quarantined, "
             f"{c['warning']} warning(s){tail}"]
    lines += [f"note: {n}" for n in doc["notes"]]
    if doc["unknown_side_effect"]:
        lines.append(f"note: {doc['unknown_side_effect']} tool(s) have no side_effect and will never be offered")
    return Report(f"catalog validate: {doc['file']}", (Lines(tuple(lines), wrap=False),), terminal_title=False)


def catalog_stats_report(doc: Mapping[str, Any]) -> Report:
    """Tool counts by policy and discovery fields, and the catalog hash."""
    return Report(f"catalog stats: {doc['file']}", counts_blocks(doc), terminal_title=False)


# --------------------------------------------------------------------------- gold


def gold_validate_report(doc: Mapping[str, Any]) -> Report:
    """Every issue of a gold set, then the verdict with its counts and the catalog it was checked against."""
    c, cat = doc["counts"], doc["catalog"]
    verdict = "OK" if doc["valid"] else "FAIL"
    lines = [*_issue_lines(doc, "where", 8),
             f"{verdict}: {doc['file']} ({doc['format']}): {c['error']} error(s), {c['warning']} warning(s), "
             f"{doc['queries']} queries; catalog {cat['source']} ({cat['tools']} tools, version {cat['version']})"]
    return Report(f"gold validate: {doc['file']}", (Lines(tuple(lines), wrap=False),), terminal_title=False)


def gold_stats_report(doc: Mapping[str, Any]) -> Report:
    """Query counts by slice and the label facts a reviewer checks next."""
    return Report(f"gold stats: {doc['file']}", counts_blocks(doc), terminal_title=False)


def gold_split_report(doc: Mapping[str, Any]) -> Report:
    """Queries per (intent, no_match) stratum in each part, the totals, and the two files written."""
    tune, test = doc["tune"], doc["test"]
    rows = [[f"{s['intent']}/{'no_match' if s['no_match'] else 'matched'}", s["queries"], s["tune"], s["test"]]
            for s in doc["strata"]]
    rows.append(["total", tune["queries"] + test["queries"], tune["queries"], test["queries"]])
    return Report(f"gold split: {doc['source']}", (
        table(["stratum", "queries", "tune", "test"], rows, align=("left", "right", "right", "right"),
              widths=(24, 8, 6, 6)),
        Lines((f"wrote {tune['file']} and {test['file']}",), wrap=False),
    ), terminal_title=False)


# --------------------------------------------------------------------------- canary ingest


def canary_ingest_report(doc: Mapping[str, Any]) -> Report:
    """Files and rows loaded into ``doc["table"]``, rows quarantined, and how many for each reason."""
    lines = [f"files {doc['files']}: ingested {doc['ingested']}, already ingested {doc['skipped_duplicates']}",
             f"rows {doc['rows']} kept in {doc['table']}, {doc['quarantined']} quarantined in {doc['table']}_quarantine"]
    lines += [f"  {n:>8}  {reason}" for reason, n in doc["reasons"].items()]
    return Report("canary ingest", (Lines(tuple(lines), wrap=False),), terminal_title=False)
