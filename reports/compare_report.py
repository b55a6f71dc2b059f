"""The compare report, built from its JSON document alone.

A compare report leads with its decision (an arm significantly worse than the baseline,
better, or neither: :func:`tooldisc.reports.decisions.compare_decision`), then the one
table — every arm's value of each measure side by side, marked where it differs
significantly from the baseline, with win/tie/loss — then each arm's change against
the baseline with its 95 % interval (a chart in HTML; the numbers in every format),
each slice's regressions with ``--by``, and folded away: the worst losses and biggest
wins per headline measure, each arm's tests, and the queries whose offer changed. A
terminal cannot fold, so it prints those sections in full. The gate report is
:func:`tooldisc.reports.decisions.gate_report`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tooldisc.reports.blocks import Details, Lines, Report, numeric, table
from tooldisc.reports.eval_report import _COUNTS, delta_text, describe_context, fmt, k_text

CMP_HEADERS = ("measure", "n", "A", "B", "delta", "win/tie/loss", "p (sign, Holm)", "p (rand, Holm)", "p (t, Holm)",
               "verdict")
CHANGED_HEADERS = ("id", "query", "expected", "A got", "B got", "nDCG A", "nDCG B")
MOVE_HEADERS = ("id", "query", "expected", "A got", "B got", "A", "B")
SLICE_HEADERS = ("field", "value", "queries", "arm", "measure", "A", "B", "win/tie/loss", "p (sign, Holm)", "why")
_LEGEND = ("▲ / ▼: significantly better / worse than the baseline; ?: too small to tell; "
           "!: a safety measure with a query made worse and none made better")


def _p(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def _value(value: float | None, measure: str) -> str:
    """At least 3 decimals: 4 for rates, 3 for counts (avg_k)."""
    if value is None:
        return "n/a"
    return f"{value:.3f}" if measure.split("@", 1)[0] in _COUNTS else f"{value:.4f}"


def _two(doc: Mapping[str, Any]) -> bool:
    return len(doc["arms"]) == 2


def _vs(doc: Mapping[str, Any], arm: str) -> str:
    """How an arm is named against the baseline: ``B vs A`` for two arms, else ``bm25 vs default``."""
    return "B vs A" if _two(doc) else f"{arm} vs {doc['baseline']}"


def _minus(doc: Mapping[str, Any], arm: str) -> str:
    return "B − A" if _two(doc) else f"{arm} − {doc['baseline']}"


def _compare_rows(rows: list[Mapping[str, Any]]) -> list[list[str]]:
    out = []
    for r in rows:
        out.append([r["measure"], str(r["n"]), _value(r["a"], r["measure"]), _value(r["b"], r["measure"]),
                    "n/a" if r["delta"] is None else f"{r['delta']:+.4f}",
                    f"{r['wins']}/{r['ties']}/{r['losses']}", _p(r["p_sign_holm"]), _p(r["p_randomization_holm"]),
                    _p(r["p_ttest_holm"]), r["verdict"] + (" (one-way)" if r["one_way"] else "")])
    return out


def _arm_line(doc: Mapping[str, Any], i: int, arm: Mapping[str, Any]) -> str:
    label = "AB"[i] if _two(doc) else arm["name"]
    what = "run file " if arm["kind"] == "run" else ""
    learned = f", learned file {arm['learned']}" if arm.get("learned") else ""
    base = " (baseline)" if i == 0 and not _two(doc) else ""
    return f"{label}{base}: {what}{arm['source']} (hash {arm['hash']}{learned})"


def _method_lines(doc: Mapping[str, Any]) -> list[str]:
    """Under the table: how it was decided, the markers, what is too small to tell, the notes."""
    boot = doc.get("bootstrap") or {}
    lines = [f"The exact sign test over the queries that moved decides, Holm-corrected across {doc['tests']} tests "
             f"(measures x arms against the baseline), alpha {doc['alpha']}; paired randomization test "
             f"({doc['permutations']} sign flips, seed {doc['seed']}) and paired t-test beside it; wins count "
             f"queries where {'B' if _two(doc) else 'the arm'} is better"
             + (f"; 95 % intervals: paired bootstrap over queries ({boot['resamples']:,} resamples, seed "
                f"{boot['seed']})" if boot else ""),
             _LEGEND]
    small = [r for r in doc["measures"] if r["verdict"] == "too small to tell"]
    for label, rows in ((f"fewer than {doc.get('sign_test_needs')} queries moved, so the sign test cannot reach "
                         "alpha/m", [r for r in small if r["n"]]),
                        ("no query in its domain", [r for r in small if not r["n"]])):
        if rows:
            names = [r["measure"] if _two(doc) else f"{r['measure']} ({r['arm']})" for r in rows]
            lines.append(f"too small to tell ({label}): " + ", ".join(names))
    lines += [f"note: {n}" for n in doc.get("notes", [])]
    return lines


def _table_block(doc: Mapping[str, Any]) -> Any:
    """The one table: a row per measure, every arm's value (marked against the baseline), then win/tie/loss."""
    names = [a["name"] for a in doc["arms"]]
    heads = ["measure", *[f"{n} (baseline)" if i == 0 else n for i, n in enumerate(names)],
             *[f"{n} win/tie/loss" for n in names[1:]]]
    rows = []
    for r in doc["table"]:
        values = [(_value(v, r["measure"]) + (f" {m}" if m else "")) for v, m in zip(r["values"], r["markers"],
                                                                                     strict=True)]
        wtl = [f"{w}/{t}/{lo}" for w, t, lo in zip(r["wins"][1:], r["ties"][1:], r["losses"][1:], strict=True)]
        rows.append([r["measure"], *values, *wtl])
    return table(heads, rows, "Measures", align=("left", *numeric(0, len(heads) - 1)))


def _delta_blocks(doc: Mapping[str, Any]) -> list[Any]:
    """The changes against the baseline with their intervals: a chart (HTML), and the numbers (every format)."""
    from tooldisc.reports.compare_charts import delta_chart

    names = [a["name"] for a in doc["arms"]]
    heads = ["measure", *[f"{_minus(doc, n)} [95 % CI]" for n in names[1:]]]
    rows = []
    for r in doc["table"]:
        cells = []
        for i in range(1, len(names)):
            d, lo, hi = r["delta"][i], r["delta_low"][i], r["delta_high"][i]
            cells.append(delta_text(d, lo, hi, r["measure"]) + (f" {r['markers'][i]}" if r["markers"][i] else ""))
        rows.append([r["measure"], *cells])
    numbers = Details("Change against the baseline with 95 % intervals, as numbers",
                      (table(heads, rows, align=("left", *numeric(0, len(heads) - 1))),), in_terminal=True)
    chart = delta_chart(doc)
    return [chart, numbers] if chart is not None else [numbers]


def _move_rows(items: list[Mapping[str, Any]], measure: str) -> list[list[str]]:
    rows = []
    for m in items:
        got_b = ", ".join(m["b"]) or "(empty)"
        if m.get("forbidden_offered_b") and measure.startswith("forbidden"):
            got_b += f" [forbidden: {', '.join(m['forbidden_offered_b'])}]"
        rows.append([m["id"], m["query"], ", ".join(m["expected"]) or "(none)", ", ".join(m["a"]) or "(empty)",
                     got_b, _value(m["value_a"], measure), _value(m["value_b"], measure)])
    return rows


def _move_blocks(doc: Mapping[str, Any]) -> list[Any]:
    """Per headline measure, folded: each arm's worst losses, then its biggest wins, with counts."""
    by_measure: dict[str, list[Mapping[str, Any]]] = {}
    for mv in doc["moves"]:
        by_measure.setdefault(mv["measure"], []).append(mv)
    blocks: list[Any] = []
    still = []
    for measure, moves in by_measure.items():
        moved = [mv for mv in moves if mv["wins"] or mv["losses"]]
        if not moved:
            still.append(measure)
            continue
        inner = []
        for mv in moved:
            who = "B" if _two(doc) else mv["arm"]
            for key, what, count in (("worst_losses", "worst losses", "losses"),
                                     ("biggest_wins", "biggest wins", "wins")):
                title = f"{who}'s {what} on {mv['measure']} ({len(mv[key])} of {mv[count]})"
                inner.append(table(MOVE_HEADERS, _move_rows(mv[key], mv["measure"]), title, align=numeric(5, 2)))
        counts = "; ".join(f"{'B' if _two(doc) else mv['arm']} won {mv['wins']}, lost {mv['losses']}"
                           for mv in moves)
        blocks.append(Details(f"Wins and losses on {measure}: {counts}", tuple(inner), in_terminal=True))
    if still:
        blocks.insert(0, Lines((f"no query moved on: {', '.join(still)}",)))
    return blocks


def _slice_blocks(doc: Mapping[str, Any]) -> list[Any]:
    if "slices" not in doc:
        return []
    rows = [[r["field"], r["value"], str(r["queries"]), r["arm"], r["measure"], _value(r["a"], r["measure"]),
             _value(r["b"], r["measure"]), f"{r['wins']}/{r['ties']}/{r['losses']}", _p(r["p_sign_holm"]),
             r["reason"]] for r in doc["slices"]["regressions"]]
    title = f"Regressions by slice ({', '.join(doc['slices']['by'])})"
    return [table(SLICE_HEADERS, rows, title, align=(*numeric(2, 1), "left", "left", *numeric(0, 4), "left"))]


def _changed_rows(doc: Mapping[str, Any]) -> list[list[str]]:
    return [[c["id"], c["query"], ", ".join(c["expected"]) or "(none)", ", ".join(c["a"]) or "(empty)",
             ", ".join(c["b"]) or "(empty)", fmt(c["ndcg_a"]), fmt(c["ndcg_b"])] for c in doc["changed"]]


def compare_report(doc: Mapping[str, Any]) -> Report:
    """The decision, the arms, the one table, the changes with intervals, slices; folded: wins and losses,
    each arm's tests, the queries that changed."""
    from tooldisc.reports.decisions import compare_decision

    names = [a["name"] for a in doc["arms"]]
    head = [_arm_line(doc, i, arm) for i, arm in enumerate(doc["arms"])]
    head += [f"{doc['queries']} queries ({doc['matched']} matched), {k_text(doc)}; "
             f"context: {describe_context(doc['context'])}"]
    blocks: list[Any] = [Lines(tuple(head)), _table_block(doc), Lines(tuple(_method_lines(doc)))]
    blocks += _delta_blocks(doc)
    blocks += _slice_blocks(doc)
    blocks += _move_blocks(doc)
    tests = [table(CMP_HEADERS, _compare_rows([r for r in doc["measures"] if r["arm"] == arm]), _vs(doc, arm),
                   align=("left", *numeric(0, 8), "left")) for arm in names[1:]]
    blocks.append(Details("Paired tests per arm: p-values of the sign, randomization and t-tests (Holm)",
                          tuple(tests), in_terminal=True))
    if "changed" in doc:
        blocks.append(Details(f"Queries that changed ({len(doc['changed'])} of {doc['changed_count']}), "
                              "the largest nDCG moves first",
                              (table(CHANGED_HEADERS, _changed_rows(doc), align=numeric(5, 2)),),
                              in_terminal=True))
    return Report("tooldisc compare", tuple(blocks), decision=compare_decision(doc))
