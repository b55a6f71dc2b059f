"""The ``catalog diff`` report: what a catalog change adds, removes and loosens.

Built from the document ``tooldisc catalog diff --format json`` prints. Tool names and
file paths come from the catalogs under review, so they reach every format as data
through the writers' escaping (a name like ``<svg onload=…>|x`` cannot open HTML or a cell).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tooldisc.reports.blocks import Paragraph, Report, table


def catalog_diff_report(doc: Mapping[str, Any]) -> Report:
    """Counts, then the loosening findings (the reason CI fails), then every tool that moved."""
    from tooldisc.reports.decisions import catalog_diff_decision

    added, removed, changed = doc["added"], doc["removed"], doc["changed"]
    counts = Paragraph(f"{len(added)} added, {len(removed)} removed, {len(changed)} changed.")
    findings = doc["findings"]
    policy = (table(["tool", "field", "change"], [[f["tool"], f["field"], f["message"]] for f in findings],
                    "Policy loosened", flagged=frozenset((i, 1) for i in range(len(findings))))
              if findings else Paragraph("No policy loosening."))
    blocks: list[Any] = [counts, policy]
    rows = ([[n, "added", ""] for n in added] + [[n, "removed", ""] for n in removed]
            + [[c["name"], "changed", ", ".join(c["fields"])] for c in changed])
    if rows:
        blocks.append(table(["tool", "status", "fields"], rows, "Tools"))
    return Report(f"Catalog diff: {doc['old']} → {doc['new']}", tuple(blocks), level=2,
                  decision=catalog_diff_decision(doc))
