"""The gate registry: each profile's gates are one GateSpec record each, and every name list is derived.

A new gate is one function and one record in its profile's tuple, plus its tests and its row in
docs/canary.md; the recipe test adds one and finds it in the verdict, its decision, the profile
and every rendered report.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.canary.helpers import healthy
from tooldisc.canary import gates, interleaving, shadow
from tooldisc.canary.config import GateConfig
from tooldisc.canary.profiles import profiles

DOCS = Path(__file__).resolve().parents[2] / "docs" / "canary.md"


def test_every_gate_list_is_its_registry() -> None:
    assert tuple(g.name for g in gates.GATES) == gates.GATE_NAMES
    assert tuple(g.name for g in shadow.SHADOW_GATE_SPECS) == shadow.SHADOW_GATES
    assert tuple(g.name for g in interleaving.GATES) == interleaving.INTERLEAVING_GATES
    found = profiles()
    assert found["canary"].gates is gates.GATES
    assert found["shadow"].gates is shadow.SHADOW_GATE_SPECS
    assert found["interleaving"].gates is interleaving.GATES
    for prof in found.values():
        assert len(set(prof.gate_names)) == len(prof.gate_names), prof.name


def test_a_gate_reports_under_its_record_name() -> None:
    verdict = gates.judge(healthy(), GateConfig())
    assert tuple(g.name for g in verdict.gates) == gates.GATE_NAMES


def _doc_tables() -> list[list[str]]:
    """The first column of every ``| gate | rule | when it fails |`` table in docs/canary.md."""
    tables, rows = [], None
    for line in DOCS.read_text("utf-8").splitlines():
        if line.startswith("| gate | rule | when it fails |"):
            rows = []
            tables.append(rows)
        elif rows is not None and line.startswith("|"):
            if not line.startswith("|---"):
                rows.append(line.split("|")[1].strip())
        else:
            rows = None
    return tables


def test_the_docs_tables_list_each_profile_s_gates_in_order() -> None:
    canary_table, interleaving_table = _doc_tables()
    assert tuple(canary_table) == gates.GATE_NAMES
    assert tuple(interleaving_table) == interleaving.INTERLEAVING_GATES
    text = DOCS.read_text("utf-8")
    shadow_paragraph = re.search(r"Gates: `golden`.*?\n\n", text, re.S)
    assert shadow_paragraph is not None
    named = re.findall(r"`(\w+)`(?:\s\(|\.)", shadow_paragraph.group(0))
    assert tuple(named) == shadow.SHADOW_GATES


def _audit(ev: gates.Evidence, cfg: GateConfig, cmp: object = None) -> gates.GateResult:
    return gates.GateResult("audit", gates.FAIL, gates.HOLD, "the audit log is missing", {"rows": 0})


@pytest.mark.parametrize("fmt", ["json", "md", "table"])
def test_recipe_one_record_adds_a_gate_everywhere(monkeypatch: pytest.MonkeyPatch, fmt: str) -> None:
    from tooldisc.canary.document import verdict_dict
    from tooldisc.reports.render import render

    monkeypatch.setattr(gates, "GATES", (*gates.GATES, gates.GateSpec("audit", _audit)))
    assert profiles()["canary"].gate_names[-1] == "audit"
    verdict = gates.judge(healthy(), GateConfig())
    assert verdict.gates[-1].name == "audit" and verdict.verdict == gates.HOLD
    document = verdict_dict(verdict)
    assert document["gates"][-1]["name"] == "audit"
    assert "the audit log is missing" in render(document, "verdict", fmt)
