"""The interleaving verdict's page: decision first, then the preference, the gates, the counts.

The document is :func:`tooldisc.canary.document.verdict_dict` of an ``interleaving``
verdict (:mod:`tooldisc.canary.interleaving`); this module words it — the banner, one
reason, the next step (numbers from the document's ``next_step``), the preference as a
forest row, and the gates — and computes no statistic.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from tooldisc.reports.blocks import Decision, Details, Fields, Paragraph, Report, numeric, table
from tooldisc.reports.canary_charts import forest
from tooldisc.reports.canary_words import compact, hours_text, pct, reason_rows

PREFERENCE_HEADERS = ("outcome", "B wins", "A wins", "ties", "preference", "interval", "margin", "still needed")


def _gate(d: Mapping[str, Any], name: str | None) -> Mapping[str, Any]:
    return next((g for g in d["gates"] if g["name"] == name), {"name": name, "reason": "", "numbers": {}})


def _pref(d: Mapping[str, Any]) -> Mapping[str, Any] | None:
    return next((m for m in d.get("metrics", []) if m["name"] == "preference"), None)


def _points(x: float | None) -> str:
    return "–" if x is None else f"{x * 100:+.1f}"


def _margin(m: Mapping[str, Any]) -> str:
    return f"{m['margin']['absolute'] * 100:g} points"


def _requests_text(w: Mapping[str, Any]) -> str:
    r = w.get("requests")
    return "" if r is None else f"about {r:,} more interleaved requests"


def _wait_text(d: Mapping[str, Any], wait: Mapping[str, Any]) -> str:
    text = f"Keep interleaving {pct(wait.get('percent'))} of requests and wait {hours_text(wait.get('hours'))}"
    more = _requests_text(wait)
    if more:
        shown = {"non_inferior": "to show B not worse", "worse": "to show B worse",
                 "data": "before the preference is judged"}.get(wait.get("to_show") or "", "")
        text += f" ({more}{' ' + shown if shown else ''})"
    nxt = wait.get("next_step") or {}
    if nxt.get("hours") is not None:
        text += f"; {hours_text(nxt['hours'])} at {pct(nxt.get('percent'))}"
    return text + "."


def interleave_decision(d: Mapping[str, Any]) -> Decision:
    """The banner of an interleaving verdict: B against A, one reason, the next step."""
    verdict = d["verdict"]
    ns: Mapping[str, Any] = d.get("next_step") or {}
    m = _pref(d)
    gate = _gate(d, ns.get("gate"))
    if verdict == "PROMOTE":
        assert m is not None
        why = (f"B is shown not worse than A within {_margin(m)} of preference ({_points(m.get('preference'))} "
               f"points over {m['decisive']:,} decisive requests) and every guard passes.")
        return Decision(verdict, "good", why, "B is eligible to replace A as the ranker; an operator decides. "
                        "A change beyond ranking still needs the A/B canary.")
    if verdict == "ROLLBACK":
        if ns.get("gate") == "preference" and m is not None:
            why = (f"B is shown worse than A: preference {_points(m.get('preference'))} points over "
                   f"{m['decisive']:,} decisive requests (B wins {m['wins_b']:,}, A wins {m['wins_a']:,}).")
            return Decision(verdict, "bad", why, "Stop interleaving (0 %) and keep A; investigate B's ranking.")
        return Decision(verdict, "bad", f"{gate['name']} gate: {gate['reason']}",
                        "Stop interleaving now (0 %) and investigate the security events before any new run.")
    wait = ns.get("wait") or {}
    if ns.get("action") == "wait":
        if ns.get("gate") == "data":
            nums = gate.get("numbers") or {}
            why = (f"Too few interleaved requests yet ({nums.get('interleaved', 0):,}; the preference is judged "
                   f"from {nums.get('min_requests', 500):,}).")
        elif m is not None:
            why = (f"The preference is inconclusive: {_points(m.get('preference'))} points, and its interval still "
                   f"reaches past the {_margin(m)} margin" + (" or no difference." if wait.get("to_show") == "worse"
                                                               else "."))
        else:
            why = f"{gate['name']} gate: {gate['reason']}"
        return Decision(verdict, "warn", why, _wait_text(d, wait) if wait else "Keep interleaving and collect "
                        "more requests.")
    if ns.get("gate") == "preference" and m is not None:
        why = (f"The preference is inconclusive ({_points(m.get('preference'))} points) and would not conclude if "
               "the observed difference holds.")
    else:
        why = f"{gate['name']} gate: {gate['reason']}"
    from tooldisc.canary.profiles import gate_fix

    return Decision(verdict, "warn", why, gate_fix("interleaving", gate["name"]))


def _context(d: Mapping[str, Any]) -> str:
    s = d.get("summary") or {}
    parts = [f"{d['experiment']}: {pct(d['current_percent'])} of requests interleaved"
             if d.get("current_percent") is not None else f"{d['experiment']} (interleaving)"]
    w = d.get("window") or {}
    if w.get("since") or w.get("until"):
        parts.append(f"window {w.get('since') or '…'} to {w.get('until') or '…'}")
    if w.get("hours") is not None:
        parts.append(f"{w['hours']:.1f} h of requests")
    parts.append(f"{s.get('interleaved', 0):,} interleaved requests: B won {s.get('wins_b', 0):,}, A won "
                 f"{s.get('wins_a', 0):,}, {s.get('ties', 0):,} ties")
    parts.append(f"{d.get('quarantined', 0):,} quarantined rows")
    return "; ".join(parts) + "."


def _needed(m: Mapping[str, Any]) -> str:
    need = m.get("needed")
    if m["outcome"] != "inconclusive" or not need:
        return ""
    if need.get("requests") is None:
        return "not reachable if the observed preference holds"
    text = f"+{need['requests']:,} interleaved"
    if need.get("hours") is not None:
        text += f" (~{need['hours']:g} h)"
    return text


def _pref_rows(d: Mapping[str, Any]) -> list[list[str]]:
    m = _pref(d)
    if m is None:
        return []
    iv = m.get("interval") or {}
    interval = (f"{iv['low'] * 100:+.1f} to {iv['high'] * 100:+.1f} points"
                if iv.get("low") is not None and iv.get("high") is not None else "–")
    return [[m["outcome"], f"{m['wins_b']:,}", f"{m['wins_a']:,}", f"{m['ties']:,}",
             f"{_points(m.get('preference'))} points", interval, _margin(m), _needed(m)]]


def _gates_table(d: Mapping[str, Any], title: str | None = "Gates") -> Any:
    return table(["gate", "status", "reason"], [[g["name"], g["status"], g["reason"]] for g in d["gates"]],
                 title, status=(1,))


def _counts(d: Mapping[str, Any]) -> Fields:
    s = d.get("summary") or {}
    req = s.get("requests") or {}
    first = s.get("first_position") or {}
    pairs = [("requests (rows) per arm", ", ".join(f"{a} {n:,}" for a, n in sorted(req.items())) or "none"),
             ("interleaved requests", f"{s.get('interleaved', 0):,}"),
             ("B wins / A wins / ties", f"{s.get('wins_b', 0):,} / {s.get('wins_a', 0):,} / {s.get('ties', 0):,}"),
             ("first position (contested offers)", f"A {first.get('A', 0):,}, B {first.get('B', 0):,}"),
             ("mean offered tools", "–" if s.get("mean_offered") is None else f"{s['mean_offered']:g}")]
    return Fields(tuple(pairs), "Counts")


def interleave_report(d: Mapping[str, Any]) -> Report:
    """Decision first, then the preference (forest row and table), the gates, the counts, the
    quarantine reasons and every gate's numbers folded away."""
    blocks: list[Any] = [Paragraph(_context(d))]
    charts, _missing = forest(d)
    note = ("The bar is the always-valid interval of B's preference over A (alpha 0.05 on each side, valid at every "
            "look); the shaded band runs from no preference (solid line) to the margin; right is worse for B. "
            "B is shown not worse when the bar ends inside the band's far edge; \"worse\" is decided at alpha 0.01.")
    for i, c in enumerate(charts):
        blocks.append(replace(c, heading="Preference" if i == 0 else None, note=note))
    if _pref(d) is not None:
        blocks.append(table(list(PREFERENCE_HEADERS), _pref_rows(d), None if charts else "Preference", status=(0,)))
    blocks.append(_gates_table(d))
    blocks.append(_counts(d))
    if reasons := reason_rows(d):
        blocks.append(table(["reason", "rows"], reasons, "Quarantined rows by reason", align=numeric(1, 1)))
    blocks.append(Details("Raw numbers: every gate's numbers (all of it: --format json)",
                          (Fields(tuple((g["name"], compact(g["numbers"])) for g in d["gates"]), "Gate numbers",
                                  code=True),)))
    return Report(f"Canary verdict (interleaving): {d['experiment']}", tuple(blocks), decision=interleave_decision(d))


def interleave_summary(d: Mapping[str, Any]) -> Report:
    """The compact CI summary: the decision line, the gates and the preference; no JSON."""
    blocks: list[Any] = [Paragraph(_context(d)), _gates_table(d, None)]
    if _pref(d) is not None:
        blocks.append(table(list(PREFERENCE_HEADERS), _pref_rows(d)))
    return Report(f"Canary {d['verdict']}: {d['experiment']} (interleaving)", tuple(blocks), level=2,
                  decision=interleave_decision(d))
