"""The decision line of the reports that decide something besides a canary verdict.

``gate`` passes or fails (its exit code), and ``catalog diff`` loosens policy or not
(its exit code too): each says so first — the HTML banner, the Markdown summary's
opening line, the terminal's first lines — with the deciding measure or tool and what
to do. The gate report's body is :func:`tooldisc.reports.compare_report.gate_report`;
this adds its decision.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from tooldisc.reports.blocks import Decision, Report


def _listed(items: list[str], most: int = 3) -> str:
    return ", ".join(items[:most]) + (f" and {len(items) - most} more" if len(items) > most else "")


def gate_decision(doc: Mapping[str, Any]) -> Decision:
    """PASSED or FAILED, the thresholds that fail, and what to do."""
    from tooldisc.reports.compare_report import _threshold_text
    from tooldisc.reports.eval_report import fmt

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
    from tooldisc.reports.compare_report import gate_report as body

    return replace(body(doc), decision=gate_decision(doc))


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
