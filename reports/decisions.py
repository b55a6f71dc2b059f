"""The decision line of the reports that decide something besides a canary verdict.

``gate`` passes or fails (its exit code), ``catalog diff`` loosens policy or not (its
exit code too), and ``compare`` finds an arm worse than the baseline, better, or
neither (what ``--fail-if-worse`` acts on): each says so first — the HTML banner, the
Markdown summary's opening line, the terminal's first lines — with the deciding
measure or tool and what to do. The gate report (a CI step summary) is built here too, its
decision first.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from tooldisc.reports.blocks import Decision, Paragraph, Report, numeric, table
from tooldisc.reports.eval_report import delta_text, fmt

GATE_HEADERS = ("result", "measure", "threshold", "actual")


def _listed(items: list[str], most: int = 3) -> str:
    return ", ".join(items[:most]) + (f" and {len(items) - most} more" if len(items) > most else "")


def gate_decision(doc: Mapping[str, Any]) -> Decision:
    """PASSED or FAILED, the thresholds that fail, and what to do."""
    checks = doc["checks"]
    failed = [c for c in checks if not c["passed"]]
    if not failed:
        return Decision("PASSED", "good", f"All {len(checks)} thresholds hold.")
    why = (f"{len(failed)} of {len(checks)} thresholds fail: "
           + _listed([f"{c['measure']} is {fmt(c['actual'], c['measure'])}, needs {_threshold_text(c)}"
                      for c in failed]) + ".")
    return Decision("FAILED", "bad", why, "Fix the regression (or change the threshold in review); the gate "
                                          "exits 1 until every threshold holds.")


def gate_report(doc: Mapping[str, Any]) -> Report:
    """The gate report with its decision first."""
    return replace(_gate_body(doc), decision=gate_decision(doc))


def catalog_diff_decision(doc: Mapping[str, Any]) -> Decision:
    """Whether the change loosens policy (``catalog diff`` exits 1 when it does)."""
    counts = f"{len(doc['added'])} added, {len(doc['removed'])} removed, {len(doc['changed'])} changed"
    findings = doc["findings"]
    if not findings:
        return Decision("NO POLICY LOOSENING", "good", f"{counts}; no change loosens policy.")
    why = (f"{counts}; {len(findings)} change{'s' if len(findings) > 1 else ''} loosen policy: "
           + _listed([f"{f['tool']} ({f['field']})" for f in findings]) + ".")
    return Decision("POLICY LOOSENED", "bad", why, "Have each change below reviewed before it ships; "
                                                   "catalog diff exits 1 while any stands.")


def _change(r: Mapping[str, Any]) -> str:
    """``hit@15 (−0.0500, 95 % CI [−0.0800, −0.0200])``: a measure's change and its interval."""
    return f"{r['measure']} ({delta_text(r['delta'], r['delta_low'], r['delta_high'], r['measure'], ci=True)})"


def _one_way(r: Mapping[str, Any]) -> str:
    n = r["losses"]
    return f"{r['measure']} worse on {n} quer{'y' if n == 1 else 'ies'}"


def compare_decision(doc: Mapping[str, Any]) -> Decision:
    """Is an arm significantly worse than the baseline, better, or neither — and on what.

    Worse wins over better: ``compare --fail-if-worse`` exits 1 on a significant
    regression and on a one-way safety regression (a query made worse on
    ``forbidden@K`` or ``false_abstention`` and none better), so both are "worse" here.
    With many arms each names only its first measure's interval, so the decision stays
    a few lines long.
    """
    names = [a["name"] for a in doc["arms"]]
    two = len(names) == 2
    base = "A" if two else doc["baseline"]
    listed = 2 if two else 1

    def label(arm: str) -> str:
        return "B" if two else arm

    rows = {n: [r for r in doc["measures"] if r["arm"] == n] for n in names[1:]}
    worse = {n: [r for r in rs if r["verdict"] == "A better"] for n, rs in rows.items()}
    one_way = {n: [r for r in rs if r["one_way"] and r["verdict"] != "A better"] for n, rs in rows.items()}
    better = {n: [r for r in rs if r["verdict"] == "B better"] for n, rs in rows.items()}
    bad = [n for n in names[1:] if worse[n] or one_way[n]]
    good = [n for n in names[1:] if better[n] and n not in bad]
    clauses = []
    for n in bad:
        parts = []
        if worse[n]:
            parts.append(f"{label(n)} is significantly worse than {base} on "
                         + _listed([_change(r) for r in worse[n]], listed))
        if one_way[n]:
            parts.append(("it" if worse[n] else label(n)) + " made "
                         + _listed([_one_way(r) for r in one_way[n]], listed)
                         + " and better on none (a one-way safety regression)")
        if better[n]:
            parts.append("better on " + _listed([r["measure"] for r in better[n]], listed))
        clauses.append("; ".join(parts))
    for n in good:
        clauses.append(f"{label(n)} is significantly better than {base} on "
                       + _listed([_change(r) for r in better[n]], listed) + " and worse on none")
    shown = clauses[:3] + ([f"{len(clauses) - 3} more arms differ"] if len(clauses) > 3 else [])
    method = f"sign test, Holm over {doc['tests']} tests, alpha {doc['alpha']:g}"
    if bad:
        if two:
            word = (f"MIXED: B WORSE ON {len(worse[bad[0]]) + len(one_way[bad[0]])}, BETTER ON "
                    f"{len(better[bad[0]])}" if better[bad[0]] else "B IS WORSE")
        else:
            word = f"{len(bad)} OF {len(names) - 1} ARMS WORSE"
        who = "B" if two else _listed(bad)
        one = len(bad) == 1
        if any(better[n] for n in bad):
            nxt = (f"Weigh what {who if one else 'each of ' + who} gains against what it loses (the worst losses "
                   "are listed below); compare --fail-if-worse exits 1 on this.")
        else:
            nxt = (f"Do not ship {who} as {'it is' if one else 'they are'}: the worst losses are listed below; "
                   "compare --fail-if-worse exits 1 on this.")
        return Decision(word, "bad", "; ".join(shown) + f" ({method}).", nxt)
    if good:
        word = "B IS BETTER" if two else f"{len(good)} OF {len(names) - 1} ARMS BETTER"
        who = "B" if two else _listed(good)
        return Decision(word, "good", "; ".join(shown) + f" ({method}).",
                        f"{who} may replace {base}: worse on no measure. Review the losses below before "
                        "switching.")
    order = [r["measure"] for r in doc["table"]]
    small = sorted({r["measure"] for rs in rows.values() for r in rs if r["verdict"] == "too small to tell"
                    and r["n"]}, key=order.index)
    empty = sorted({r["measure"] for rs in rows.values() for r in rs if not r["n"]}, key=order.index)
    between = "between B and A" if two else f"between any arm and {base}"
    why = f"No measure differs significantly {between} ({method})."
    if small:
        why += f" Too small to tell: {_listed(small)}."
    if empty:
        why += f" No query is in the domain of {_listed(empty)}."
    if small and doc.get("sign_test_needs"):
        nxt = (f"Judge on more queries: a measure needs at least {doc['sign_test_needs']} queries that moved "
               "before the sign test can show a difference.")
    else:
        nxt = (f"Keep {base} unless something else favours {'B' if two else 'another arm'}: these "
               f"{doc['queries']} queries show no difference.")
    return Decision("NO SIGNIFICANT DIFFERENCE", "info", why, nxt)


def _threshold_text(c: Mapping[str, Any]) -> str:
    """``>= 0.95``, or for a --max-drop check ``>= 0.8622 (baseline 0.8722 - 0.01)``."""
    rel = ">= " if c["bound"] == "min" else "<= "
    if c.get("max_drop") is None:
        return rel + f"{c['threshold']:g}"
    if c.get("baseline") is None:
        return f"drop <= {c['max_drop']:g} (baseline: n/a)"
    sign = "-" if c["bound"] == "min" else "+"
    return rel + f"{c['threshold']:.6g} (baseline {c['baseline']:.6g} {sign} {c['max_drop']:g})"


def _gate_body(doc: Mapping[str, Any]) -> Report:
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
