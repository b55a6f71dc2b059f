"""The compare and gate reports, built from their JSON documents alone.

A compare report puts each measure's A and B side by side with the paired tests'
Holm-corrected p-values and says in words which is better, or that the sample is too
small to tell; a gate report leads with the verdict, since it is read in a CI step
summary.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tooldisc.reports.blocks import Chart, Lines, Paragraph, Report, numeric, table
from tooldisc.reports.eval_report import _COUNTS, describe_context, fmt, k_text

CMP_HEADERS = ("measure", "n", "A", "B", "delta", "win/tie/loss", "p (rand, Holm)", "p (t, Holm)", "verdict")
CHANGED_HEADERS = ("id", "query", "expected", "A got", "B got", "nDCG A", "nDCG B")
GATE_HEADERS = ("result", "measure", "threshold", "actual")


def _p(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def _compare_rows(doc: Mapping[str, Any]) -> list[list[str]]:
    rows = []
    for r in doc["measures"]:
        delta = "n/a" if r["delta"] is None else f"{r['delta']:+.4f}"
        rows.append([r["measure"], str(r["n"]), fmt(r["a"], r["measure"]), fmt(r["b"], r["measure"]), delta,
                     f"{r['wins']}/{r['ties']}/{r['losses']}", _p(r["p_randomization_holm"]),
                     _p(r["p_ttest_holm"]), r["verdict"]])
    return rows


def _compare_lines(doc: Mapping[str, Any]) -> list[str]:
    lines = [f"A: {doc['a']['source']} (hash {doc['a']['hash']})", f"B: {doc['b']['source']} (hash {doc['b']['hash']})",
             f"{doc['queries']} queries ({doc['matched']} matched), {k_text(doc)}; "
             f"paired randomization test ({doc['permutations']} sign flips, seed {doc['seed']}) and paired t-test, "
             f"Holm-corrected across measures, alpha {doc['alpha']}; wins count queries where B is better",
             f"context: {describe_context(doc['context'])}"]
    if doc["too_small"]:
        lines.append("too small to tell (fewer than 30 queries, or fewer than 20 that moved): "
                     + ", ".join(doc["too_small"]))
    lines += [f"note: {n}" for n in doc.get("notes", [])]
    return lines


def _changed_rows(doc: Mapping[str, Any]) -> list[list[str]]:
    return [[c["id"], c["query"], ", ".join(c["expected"]) or "(none)", ", ".join(c["a"]) or "(empty)",
             ", ".join(c["b"]) or "(empty)", fmt(c["ndcg_a"]), fmt(c["ndcg_b"])] for c in doc["changed"]]


def compare_report(doc: Mapping[str, Any]) -> Report:
    """How A and B were run, A and B per rate measure (HTML chart), the tests, the queries that changed."""
    rates = tuple({"measure": r["measure"], "config": side, "value": r[side.lower()]}
                  for r in doc["measures"] if r["measure"].split("@", 1)[0] not in _COUNTS
                  for side in ("A", "B") if r[side.lower()] is not None)
    blocks: list[Any] = [Lines(tuple(_compare_lines(doc)))]
    if rates:
        blocks.append(Chart("bar", rates, x="measure", y="value", color="config", y_title="value",
                            title="A and B per measure (means over the queries each measure covers)"))
    blocks.append(table(CMP_HEADERS, _compare_rows(doc), "B vs A", align=("left", *numeric(0, 7), "left")))
    blocks.append(table(CHANGED_HEADERS, _changed_rows(doc),
                        f"Queries that changed ({len(doc['changed'])} of {doc['changed_count']})",
                        align=numeric(5, 2)))
    return Report("tooldisc compare", tuple(blocks))


def _threshold_text(c: Mapping[str, Any]) -> str:
    """``>= 0.95``, or for a --max-drop check ``>= 0.8622 (baseline 0.8722 - 0.01)``."""
    rel = ">= " if c["bound"] == "min" else "<= "
    if c.get("max_drop") is None:
        return rel + f"{c['threshold']:g}"
    if c.get("baseline") is None:
        return f"drop <= {c['max_drop']:g} (baseline: n/a)"
    sign = "-" if c["bound"] == "min" else "+"
    return rel + f"{c['threshold']:.6g} (baseline {c['baseline']:.6g} {sign} {c['max_drop']:g})"


def gate_report(doc: Mapping[str, Any]) -> Report:
    """A CI step summary (a level-2 title, so it sits under a job's own): verdict, then one row per threshold."""
    failed = sum(1 for c in doc["checks"] if not c["passed"])
    rows = [["pass" if c["passed"] else "FAIL", c["measure"], _threshold_text(c), fmt(c["actual"], c["measure"])]
            for c in doc["checks"]]
    source = f" (eval results: {doc['source']})" if doc.get("source") else ""
    if doc.get("baseline"):
        source += f"; baseline: {doc['baseline']['source']}"
    summary = f"{len(doc['checks']) - failed} of {len(doc['checks'])} thresholds hold{source}"
    return Report(f"tooldisc gate: {'passed' if doc['passed'] else 'FAILED'}",
                  (Paragraph(summary), table(GATE_HEADERS, rows, status=(0,), align=numeric(3, 1))), level=2)
