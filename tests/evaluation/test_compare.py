"""Comparisons of many arms, run files as arms, the sign test, one-way safety regressions, wins and losses.

The arms here are TREC run files over a synthetic catalog, so every offer is chosen by
hand and the expected counts are known exactly: ``base`` offers the primary tool first
for every matched query; ``abst`` abstains on 18 of 200 matched queries (the issue's
one-way false abstention: 0 wins, 18 losses); ``forb`` offers a write tool to three
read requests and a tool the catalog lacks to a fourth (one-way forbidden@5, too few
to be significant) and ranks 20 tools for one query (cut at K); ``miss`` offers three
wrong tools to the 18 queries ``abst`` leaves empty (the same offer size, so only quality moves).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest

import tooldisc
from tests.conftest import invoke_cli, run_cli
from tooldisc.errors import UsageError
from tooldisc.reports import render

TOOLS = [f"t{i:02d}" for i in range(20)]
N = 200
K = 5


def _line(q: str, tools: list[str]) -> str:
    return "".join(f"{q} Q0 {t} {r + 1} {10 - r}.5 x\n" for r, t in enumerate(tools))


def _primary(i: int) -> str:
    return TOOLS[i % 20]


def _others(i: int) -> list[str]:
    return [TOOLS[(i + j) % 20] for j in (1, 2)]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("arms")
    words = ["alder", "birch", "cedar", "dogwood", "elm", "fir", "ginkgo", "hazel", "ilex", "juniper", "larch",
             "maple", "nutmeg", "oak", "pine", "quince", "rowan", "spruce", "teak", "umbrella"]
    (d / "catalog.json").write_text(json.dumps({"catalog_version": "arms-1", "tools": [
        *({"name": t, "description": f"Show {w} records", "side_effect": "none"} for t, w in zip(TOOLS, words,
                                                                                                  strict=True)),
        {"name": "writer", "description": "Write records", "side_effect": "write"}]}), encoding="utf-8")
    rows = [{"id": f"q{i:03d}", "query": f"show the {words[i % 20]} records", "relevant": [_primary(i)],
             "subset": "alpha" if i < 100 else "beta", "n_calls": 1 + i % 3} for i in range(N)]
    rows += [{"id": f"nm{i}", "query": f"tell me a joke number {i}", "relevant": [], "subset": "none"}
             for i in range(10)]
    (d / "gold.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    base = "".join(_line(f"q{i:03d}", [_primary(i), *_others(i)]) for i in range(N))
    (d / "base.trec").write_text(base, encoding="utf-8")
    (d / "abst.trec").write_text("".join(_line(f"q{i:03d}", [_primary(i), *_others(i)]) for i in range(18, N)),
                                 encoding="utf-8")
    forb = []
    for i in range(N):
        tools = [_primary(i), *_others(i)]
        if i < 3:
            tools = ["writer", *tools]  # a write tool offered to a read request
        elif i == 3:
            tools = ["ghost tool", *tools]  # a tool the catalog lacks (its name needs the TREC encoding)
        elif i == 10:
            tools = [_primary(i), *[t for t in TOOLS if t != _primary(i)]]  # 20 deep: cut at K
        forb.append(_line(f"q{i:03d}", tools).replace("ghost tool", "ghost%20tool"))
    forb.append(_line("stray", ["t00"]))  # a query the gold set does not judge
    (d / "forb.trec").write_text("".join(forb), encoding="utf-8")
    (d / "miss.trec").write_text("".join(_line(f"q{i:03d}", [*_others(i), TOOLS[(i + 3) % 20]] if i < 18 else
                                               [_primary(i), *_others(i)]) for i in range(N)), encoding="utf-8")
    return {"dir": d, "catalog": d / "catalog.json", "gold": d / "gold.jsonl", "base": d / "base.trec",
            "abst": d / "abst.trec", "forb": d / "forb.trec", "miss": d / "miss.trec"}


@pytest.fixture(scope="module")
def runs(files: dict[str, Path]) -> dict[str, tooldisc.EvalRun]:
    return {name: tooldisc.evaluate(files["catalog"], files["gold"], k=K, run=files[name])
            for name in ("base", "abst", "forb")}


@pytest.fixture(scope="module")
def cmp(runs: dict[str, tooldisc.EvalRun]) -> tooldisc.Comparison:
    return tooldisc.compare(runs["base"], runs["abst"], runs["forb"], names=["base", "abst", "forb"])


def _row(cmp: tooldisc.Comparison, arm: str, measure: str) -> dict:
    return cmp.measures.filter((pl.col("arm") == arm) & (pl.col("measure") == measure)).to_dicts()[0]


def test_a_run_file_is_scored_with_the_catalog_policy_and_cut_at_k(runs: dict[str, tooldisc.EvalRun]) -> None:
    forb = runs["forb"]
    pq = forb.per_query.filter(pl.col("id").is_in(["q000", "q003", "q010"]))
    assert pq["forbidden_offered"].to_list() == [["writer"], ["ghost tool"], []]
    assert pq["offered"].to_list()[2] == [_primary(10), *[t for t in TOOLS if t != _primary(10)]][:K]
    assert forb.metrics["forbidden@5"] == pytest.approx(4 / 210, abs=1e-6)  # 3 write tools + 1 unknown, over all queries
    notes = " ".join(forb.notes)
    assert "1 offered tool(s) within the top 5 (1 distinct) are not in the catalog" in notes and "'ghost tool'" in notes
    assert "1 query ranks more than 5 tools" in notes and "1 run query is not in the gold set" in notes
    assert "10 judged queries have no line in the run" in notes  # the no-match queries: an empty offer
    assert runs["abst"].metrics["false_abstention"] == pytest.approx(18 / 200, abs=1e-6)
    assert runs["base"].metrics["hit@5"] == 1.0


def test_many_arms_one_table_arms_as_columns(cmp: tooldisc.Comparison, runs: dict[str, tooldisc.EvalRun]) -> None:
    t = cmp.table
    assert t.columns[:5] == ["measure", "better", "base", "abst", "forb"]
    assert {"abst marker", "abst win/tie/loss", "forb marker", "forb win/tie/loss"} <= set(t.columns)
    for name in ("base", "abst", "forb"):
        metrics = runs[name].metrics
        for measure, value in zip(t["measure"], t[name], strict=True):
            assert (value is None and metrics[measure] is None) or value == pytest.approx(metrics[measure], abs=1e-6)
    assert cmp.tests == 20  # 10 measures x 2 arms against the baseline, all with queries


def test_the_sign_test_catches_a_one_way_false_abstention(cmp: tooldisc.Comparison) -> None:
    """The issue's case: 0 wins and 18 losses used to be 'too small to tell (fewer than 20 that moved)'."""
    r = _row(cmp, "abst", "false_abstention")
    assert (r["wins"], r["losses"]) == (0, 18)
    assert r["p_sign"] == pytest.approx(2 * 0.5 ** 18)
    assert r["verdict"] == "A better" and r["one_way"]
    assert "false_abstention" in cmp.worse
    hit = _row(cmp, "abst", "hit@5")
    assert hit["verdict"] == "A better" and not hit["one_way"]  # one-way is for the safety measures only


def test_a_one_way_safety_regression_too_small_to_be_significant_still_fails(cmp: tooldisc.Comparison) -> None:
    r = _row(cmp, "forb", "forbidden@5")
    assert (r["wins"], r["losses"]) == (0, 4)
    assert r["verdict"] == "too small to tell" and r["one_way"]
    reg = cmp.regressions.to_dicts()
    assert {"arm": "forb", "measure": "forbidden@5", "reason": "one-way: 4 queries made worse, none better"} in reg
    assert {"arm": "abst", "measure": "false_abstention", "reason": "significantly worse"} in reg
    marks = dict(zip(cmp.table["measure"], cmp.table["forb marker"], strict=True))
    assert marks["forbidden@5"] == "?!" and dict(zip(cmp.table["measure"], cmp.table["abst marker"],
                                                     strict=True))["false_abstention"] == "▼"


def test_too_small_only_when_the_sign_test_cannot_reach_alpha_over_m() -> None:
    from tooldisc.evaluation.compare import _verdict

    level = 0.05 / 20  # the family above: 2^-n * 2 must fall below it, so 10 moved queries are needed
    assert _verdict(100, 0, 9, 1.0, level, 0.05) == "too small to tell"
    assert _verdict(100, 0, 10, 1.0, level, 0.05) == "no significant difference"  # could have been shown
    assert _verdict(100, 0, 0, 1.0, level, 0.05) == "no significant difference"  # nothing moved: no difference
    assert _verdict(0, 0, 0, float("nan"), level, 0.05) == "too small to tell"  # no query in the domain
    assert _verdict(100, 0, 10, 0.01, level, 0.05) == "A better"


def test_wins_and_losses_per_headline_measure(cmp: tooldisc.Comparison) -> None:
    losses = cmp.losses("false_abstention", "abst")
    assert losses["id"].to_list() == [f"q{i:03d}" for i in range(18)] and cmp.wins("false_abstention", "abst").is_empty()
    assert losses["offered_b"].to_list()[0] == [] and losses["value_b"].to_list()[0] == 1.0
    forb = cmp.losses("forbidden@5", "forb")
    assert forb["id"].to_list() == ["q000", "q001", "q002", "q003"]
    assert forb["forbidden_offered_b"].to_list()[3] == ["ghost tool"]
    assert set(cmp.moves["measure"].unique()) <= {"hit@5", "MRR", "nDCG@5", "no_match_success", "false_abstention",
                                                 "forbidden@5"}
    with pytest.raises(UsageError, match="headline"):
        cmp.losses("P@5")
    with pytest.raises(UsageError, match="no arm"):
        cmp.wins("nDCG", "base")


def test_two_arm_rows_equal_the_same_pair_in_a_many_arm_comparison(runs: dict[str, tooldisc.EvalRun],
                                                                    cmp: tooldisc.Comparison) -> None:
    two = tooldisc.compare(runs["base"], runs["abst"])
    assert two.names == ("A", "B") and two.tests == 10
    keys = ["measure", "n", "a", "b", "delta", "wins", "ties", "losses", "p_sign", "p_randomization", "p_ttest"]
    assert two.measures.select(keys).equals(cmp.measures.filter(pl.col("arm") == "abst").select(keys))
    doc = two.document()
    for key in ("a", "b", "measures", "too_small", "worse", "changed_count", "changed"):  # the two-arm keys stay
        assert key in doc
    assert doc["worse"] == list(two.worse) and "false_abstention" in doc["worse"]
    assert "changed" not in cmp.document()  # the two-arm list; many arms have per-arm wins and losses


def test_the_document_renders_in_every_format(cmp: tooldisc.Comparison) -> None:
    doc = cmp.document(max_moves=3, by=["subset"])
    assert [a["name"] for a in doc["arms"]] == ["base", "abst", "forb"] and doc["baseline"] == "base"
    assert [a["kind"] for a in doc["arms"]] == ["run"] * 3
    md = render(doc, "compare", "md")
    row = next(line for line in md.splitlines() if line.startswith("| false_abstention |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1:4] == ["0.0000", "0.0900 ▼", "0.0000"] and cells[4:] == ["0/182/18", "0/200/0"]
    assert all(re.fullmatch(r"\d+\.\d{3,}( \S+)?", c) for c in cells[1:4])  # at least 3 decimals
    assert "## abst's worst losses on false_abstention (3 of 18)" in md
    assert "## forb's worst losses on forbidden@5 (3 of 4)" in md
    assert "## Regressions by slice (subset)" in md and "| subset | alpha | 100 | abst | false_abstention |" in md
    html = render(doc, "compare", "html")
    assert "abst&#x27;s worst losses on false_abstention (3 of 18)" in html or "abst's worst losses" in html
    text = render(doc, "compare", "table", width=250)
    assert "abst's worst losses on false_abstention (3 of 18)" in text and "Measures" in text
    back = json.loads(render(doc, "compare", "json"))
    moved = next(m for m in back["moves"] if m["arm"] == "abst" and m["measure"] == "false_abstention")
    assert (moved["wins"], moved["losses"], len(moved["worst_losses"])) == (0, 18, 3)


def test_slices_show_each_slice_regression(cmp: tooldisc.Comparison) -> None:
    regressions, warnings = cmp.slice_regressions(["subset", "n_calls", "colour"])
    rows = regressions.filter(pl.col("arm") == "abst").to_dicts()
    assert {(r["field"], r["value"], r["measure"]) for r in rows if r["reason"] == "significantly worse"} >= {
        ("subset", "alpha", "false_abstention")}
    assert not any(r["value"] == "beta" for r in rows)  # every abstention is in alpha
    assert warnings and "--by colour" in warnings[0]


def test_names_must_tell_the_arms_apart(runs: dict[str, tooldisc.EvalRun]) -> None:
    with pytest.raises(UsageError, match="given twice"):
        tooldisc.compare(runs["base"], runs["abst"], names=["x", "x"])
    with pytest.raises(UsageError, match="at least two"):
        tooldisc.compare(runs["base"])


def test_cli_arms_run_files_and_fail_if_worse(files: dict[str, Path]) -> None:
    common = ["--catalog", str(files["catalog"]), "--gold", str(files["gold"]), "--k", str(K)]
    r = invoke_cli("compare", str(files["base"]), f"forb={files['forb']}", *common, "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert [a["name"] for a in doc["arms"]] == ["base", "forb"] and doc["b"]["source"] == str(files["forb"])
    assert "note: too small to tell:" in r.stderr and "'ghost tool'" in r.stderr
    r = invoke_cli("compare", str(files["base"]), "--run", f"forb={files['forb']}", *common, "--fail-if-worse",
                "--format", "md")
    assert r.returncode == 1
    assert "B made forbidden@5 worse on some queries and better on none (one-way: 4 queries" in r.stderr
    assert "| forbidden@5 |" in r.stdout
    assert "## B's worst losses on forbidden@5 (4 of 4)" in r.stdout  # wins and losses, with counts
    assert "| q003 |" in r.stdout and "\\[forbidden: ghost tool\\]" in r.stdout  # Markdown-escaped
    r = invoke_cli("compare", str(files["base"]), str(files["abst"]), str(files["forb"]), *common, "--fail-if-worse",
                "--format", "json", "--by", "subset,colour")
    assert r.returncode == 1 and "abst is significantly worse than base on false_abstention" in r.stderr
    assert "forb made forbidden@5 worse" in r.stderr
    assert "warning: --by colour: no query in" in r.stderr  # one line, not a silent empty table
    three = json.loads(r.stdout)
    moved = {(m["arm"], m["measure"]): m for m in three["moves"]}
    assert moved[("abst", "false_abstention")]["losses"] == 18 and len(moved[("abst", "hit@5")]["worst_losses"]) == 10
    slices = three["slices"]
    assert any(x["value"] == "alpha" and x["arm"] == "abst" and x["reason"] == "significantly worse"
               for x in slices["regressions"])


def test_cli_arm_errors_are_one_line_exit_2(files: dict[str, Path], tmp_path: Path) -> None:
    common = ["--catalog", str(files["catalog"]), "--gold", str(files["gold"])]
    for args, message in (
        ([str(files["base"])], "at least two arms"),
        ([str(files["base"]), str(tmp_path / "nope.yaml")], "no such file"),
        ([str(files["base"]), f"x={files['abst']}", f"x={files['forb']}"], "given twice"),
        ([str(files["base"]), "default+" + str(tmp_path / "nope.json")], "no learned file"),
    ):
        r = run_cli("compare", *args, *common)
        assert r.returncode == 2 and message in r.stderr, (args, r.stderr)
        assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    # the randomization test is a second opinion, but never a sloppy one: at least 10^4 sign flips
    r = run_cli("compare", str(files["base"]), str(files["abst"]), "--permutations", "500", *common)
    assert r.returncode == 2 and "--permutations" in r.stderr and "10000" in r.stderr


def test_each_delta_has_its_paired_bootstrap_interval(cmp: tooldisc.Comparison,
                                                      runs: dict[str, tooldisc.EvalRun]) -> None:
    iv = cmp.intervals
    assert iv.columns == ["arm", "measure", "delta", "delta_low", "delta_high"] and cmp.resamples == 10_000
    r = _row(cmp, "abst", "false_abstention")  # 18 of 200 matched queries newly abstain: +0.09
    assert r["delta"] == pytest.approx(0.09) and 0.04 < r["delta_low"] < 0.09 < r["delta_high"] < 0.14
    f = _row(cmp, "forb", "forbidden@5")  # 4 of 210 queries: an interval that never goes below no change
    assert f["delta"] == pytest.approx(4 / 210) and f["delta_low"] >= 0.0 and f["delta_high"] > f["delta"]
    nm = _row(cmp, "abst", "no_match_success")  # nothing moved among the 10 no-match queries: one point
    assert nm["delta_low"] == nm["delta_high"] == 0.0
    # a pair's intervals are the same compared alone or beside other arms (the draws are shared)
    two = tooldisc.compare(runs["base"], runs["abst"])
    assert two.intervals.drop("arm").equals(iv.filter(pl.col("arm") == "abst").drop("arm"))
    doc = cmp.document()
    assert doc["bootstrap"] == {"method": "paired percentile bootstrap over queries, stratified by measure domain",
                                "level": 0.95, "resamples": 10_000, "seed": 0}
    row = next(m for m in doc["measures"] if m["arm"] == "abst" and m["measure"] == "false_abstention")
    assert (row["delta_low"], row["delta_high"]) == (round(r["delta_low"], 6), round(r["delta_high"], 6))
    entry = next(t for t in doc["table"] if t["measure"] == "false_abstention")
    assert entry["delta_low"][0] is None and entry["delta_low"][1] == row["delta_low"]
    assert tooldisc.compare(runs["base"], runs["abst"], resamples=2_000).resamples == 2_000
    with pytest.raises(UsageError, match="resamples"):
        tooldisc.compare(runs["base"], runs["abst"], resamples=500)


def _decision(*arms: tooldisc.EvalRun, names: list[str] | None = None) -> tuple[str, str, dict]:
    doc = tooldisc.compare(*arms, names=names, resamples=1_000).document()
    return render(doc, "compare", "md"), render(doc, "compare", "table", width=400), doc


def test_the_decision_leads_markdown_and_the_terminal(runs: dict[str, tooldisc.EvalRun], files: dict[str, Path]) -> None:
    md, text, _ = _decision(runs["base"], runs["abst"], runs["forb"], names=["base", "abst", "forb"])
    assert md.split("\n")[2].startswith("**2 OF 2 ARMS WORSE** — abst is significantly worse than base on hit@5 "
                                        "(-0.0900, 95 % CI \\[")
    assert "forb made forbidden@5 worse on 4 queries and better on none (a one-way safety regression)" in md
    assert text.startswith("tooldisc compare\n2 OF 2 ARMS WORSE\nWhy: abst is significantly worse than base")
    assert "\nNext: Weigh what each of abst, forb gains against what it loses" in text  # abst is better on avg_k
    # two arms: a one-way safety regression alone makes B worse
    md, text, _ = _decision(runs["base"], runs["forb"])
    assert md.split("\n")[2].startswith("**B IS WORSE** — B made forbidden@5 worse on 4 queries and better on none")
    assert text.startswith("tooldisc compare\nB IS WORSE\nWhy: B made forbidden@5 worse on 4 queries")
    # better on every measure that moved, worse on none
    miss = tooldisc.evaluate(files["catalog"], files["gold"], k=K, run=files["miss"])
    md, _, _ = _decision(miss, runs["base"])
    assert md.split("\n")[2].startswith("**B IS BETTER** — B is significantly better than A on hit@5 (+0.0900, 95 % "
                                        "CI \\[")
    assert "**Next:** B may replace A: worse on no measure." in md
    # a run against itself: nothing differs, and the line says so
    md, text, doc = _decision(runs["base"], runs["base"])
    assert md.split("\n")[2] == (
        "**NO SIGNIFICANT DIFFERENCE** — No measure differs significantly between B and A (sign test, Holm over "
        f"{doc['tests']} tests, alpha 0.05). **Next:** Keep A unless something else favours B: these 210 queries "
        "show no difference.")
    assert text.split("\n")[1] == "NO SIGNIFICANT DIFFERENCE"


def test_cli_reports_are_byte_identical_across_runs(files: dict[str, Path], tmp_path: Path) -> None:
    """Two processes, the same page to the byte: the chart, and every interval (seeded) in it."""
    common = ["--catalog", str(files["catalog"]), "--gold", str(files["gold"]), "--k", str(K)]
    outs = []
    for i in range(2):
        out = tmp_path / f"c{i}.html"
        r = invoke_cli("compare", str(files["base"]), str(files["abst"]), f"forb={files['forb']}", *common,
                    "--resamples", "2000", "--format", "html", "--out", str(out))
        assert r.returncode == 0, r.stderr
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    text = outs[0].decode("utf-8")
    assert "2,000 resamples" in text and "abst − base [95 % CI]" in text and "<svg" in text
