"""``eval --per-query-out``, ``--run-out --run-tag`` and ``--qrels --topics`` through the real CLI.

The TREC files round-trip through ir_measures (an independent implementation): each
measure's ``ir_measures`` name, evaluated on the exported run and qrels, equals
tooldisc's value per query and in total.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import tooldisc
from tests.conftest import invoke_cli, run_cli
from tests.oracles import oracle
from tooldisc.evaluation.per_query import PER_QUERY_SCHEMA, per_query_bytes, read_per_query

irm = oracle("ir_measures")

RANKING = ("hit@3", "complete@3", "recall@3", "MRR", "P@3", "nDCG@3", "no_match_success", "false_abstention",
           "avg_k")


@pytest.fixture(scope="module")
def exported(tiny_files, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One eval writing per-query CSV and a tagged TREC run, plus the gold set's qrels and topics."""
    cat, gold = tiny_files
    d = tmp_path_factory.mktemp("exports")
    r = invoke_cli("eval", "--catalog", str(cat), "--gold", str(gold), "--k", "3", "--json",
                   "--per-query-out", str(d / "pq.csv"), "--run-out", str(d / "run.trec"), "--run-tag", "exp-1")
    assert r.returncode == 0, r.stderr
    q = invoke_cli("gold", "qrels", str(gold), "--out", str(d / "qrels.txt"), "--topics-out", str(d / "topics.tsv"))
    assert q.returncode == 0, q.stderr
    return {"dir": d, "doc": json.loads(r.stdout)}


def test_per_query_files_in_every_format_hold_the_same_table(tiny_files, exported: dict) -> None:
    cat, gold = tiny_files
    d = exported["dir"]
    for name in ("pq.parquet", "pq.jsonl"):
        r = invoke_cli("eval", "--catalog", str(cat), "--gold", str(gold), "--k", "3", "--format", "md",
                    "--per-query-out", str(d / name))
        assert r.returncode == 0, r.stderr
    frames = [read_per_query(d / name) for name in ("pq.csv", "pq.parquet", "pq.jsonl")]
    library = tooldisc.evaluate(cat, gold, k=3).per_query
    for name, frame in zip(("csv", "parquet", "jsonl"), frames, strict=True):
        assert frame.schema == PER_QUERY_SCHEMA
        if name == "jsonl":  # its rows lead with the ones that show each column's type (polars' inference)
            frame = frame.sort("id")
        assert frame.equals(library.sort("id") if name == "jsonl" else library), name
    assert frame.height == 7 and frame.filter(pl.col("no_match")).height == 1
    header, first = (d / "pq.csv").read_text("utf-8").splitlines()[:2]
    assert header.split(",")[:2] == ["id", "query"] and '"[""list_invoices""' in first  # lists as JSON arrays
    for name in ("pq.parquet", "pq.jsonl", "pq.csv"):  # byte-identical across runs
        fmt = {"parquet": "parquet", "jsonl": "jsonl", "csv": "csv"}[name.rsplit(".", 1)[1]]
        assert per_query_bytes(library, fmt) == (d / name).read_bytes()
    doc = exported["doc"]
    for name, value in doc["metrics"].items():
        col = frames[0][name.split("@")[0]].drop_nulls()
        assert (value is None and col.len() == 0) or col.mean() == pytest.approx(value, abs=1e-6)


def test_per_query_out_needs_a_known_extension(tiny_files, tmp_path: Path) -> None:
    cat, gold = tiny_files
    r = run_cli("eval", "--catalog", str(cat), "--gold", str(gold), "--per-query-out", str(tmp_path / "pq.xlsx"))
    assert r.returncode == 2 and "pq.xlsx" in r.stderr and ".parquet, .csv or .jsonl" in r.stderr
    assert "Traceback" not in r.stderr and not (tmp_path / "pq.xlsx").exists()
    r = run_cli("eval", "--catalog", str(cat), "--gold", str(gold), "--run-out", str(tmp_path / "r"),
                "--run-tag", "two words")
    assert r.returncode == 2 and "--run-tag" in r.stderr


def test_run_file_has_real_strictly_decreasing_scores_and_the_tag(exported: dict) -> None:
    d = exported["dir"]
    pq = read_per_query(d / "pq.csv")
    scores = {q: s for q, s in zip(pq["id"].to_list(), pq["scores"].to_list(), strict=True)}
    written: dict[str, list[float]] = {}
    for line in (d / "run.trec").read_text().splitlines():
        qid, _, _tool, rank, score, tag = line.split()
        assert tag == "exp-1" and int(rank) == len(written.setdefault(qid, [])) + 1
        written[qid].append(float(score))
    for qid, got in written.items():
        assert all(a > b for a, b in itertools.pairwise(got))
        assert got[0] == pytest.approx(scores[qid][0], abs=1e-6)  # discovery's score, not the rank
        assert max(abs(a - b) for a, b in zip(got, scores[qid], strict=True)) < 1e-5  # ties nudged by 1e-6


def test_ir_measures_on_the_exported_files_equals_tooldisc(exported: dict) -> None:
    d, doc = exported["dir"], exported["doc"]
    assert doc["ir_measures"] == {"hit@3": "Success(rel=2)@3", "recall@3": "R(rel=2)@3", "MRR": "RR(rel=2)",
                                  "P@3": "P(rel=1)@3", "nDCG@3": "nDCG@3"}
    _assert_ir_measures_agree(doc, d / "qrels.txt", d / "run.trec", read_per_query(d / "pq.csv"))


def test_ir_measures_on_the_shipped_set(shipped, tmp_path: Path) -> None:
    """473 queries, abstentions and no-match ones included: the same equality at K=15."""
    from tooldisc.evaluation.api import score_eval
    from tooldisc.evaluation.run import run_discovery
    from tooldisc.gold.trec import write_qrels, write_run

    _cat, gold, engine = shipped
    run = score_eval(run_discovery(engine, gold, engine.default_context, 15))
    doc = run.document(by=(), max_misses=0)
    write_qrels(gold, tmp_path / "qrels")
    write_run(run.result.run(), tmp_path / "run", scores=run.result.scores())
    _assert_ir_measures_agree(doc, tmp_path / "qrels", tmp_path / "run", run.per_query)


def _assert_ir_measures_agree(doc: dict, qrels: Path, run: Path, per_query: pl.DataFrame) -> None:
    qrels_rows = list(irm.read_trec_qrels(str(qrels)))
    run_rows = list(irm.read_trec_run(str(run)))
    names = {irm.parse_measure(v): k for k, v in doc["ir_measures"].items()}
    totals = irm.calc_aggregate(list(names), qrels_rows, run_rows)
    for measure, name in names.items():
        assert totals[measure] == pytest.approx(doc["metrics"][name], abs=1e-6), name
    theirs: dict[tuple[str, str], float] = {}
    for row in irm.iter_calc(list(names), qrels_rows, run_rows):
        theirs[(names[row.measure], row.query_id)] = row.value
    matched = per_query.filter(pl.col("matched"))
    for name in names.values():
        column = name.split("@")[0]
        ours = dict(zip(matched["id"].to_list(), matched[column].to_list(), strict=True))
        got = {q: v for (n, q), v in theirs.items() if n == name}
        assert got.keys() == ours.keys(), name  # every judged query, abstentions scored 0 by both
        assert max(abs(got[q] - ours[q]) for q in ours) < 1e-9, name


def test_qrels_and_topics_evaluate_like_the_gold_set(tiny_files, exported: dict) -> None:
    cat, _ = tiny_files
    d = exported["dir"]
    r = run_cli("eval", "--catalog", str(cat), "--qrels", str(d / "qrels.txt"), "--topics", str(d / "topics.tsv"),
                "--k", "3", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["queries"] == exported["doc"]["queries"] and doc["matched"] == exported["doc"]["matched"]
    for name in RANKING:  # intent and forbidden labels do not survive TREC files; the ranking measures do
        assert doc["metrics"][name] == exported["doc"]["metrics"][name], name
    assert any("TREC qrels" in n for n in doc["notes"])
    r = run_cli("eval", "--catalog", str(cat), "--qrels", str(d / "qrels.txt"))
    assert r.returncode == 2 and "--topics" in r.stderr
    r = run_cli("eval", "--catalog", str(cat), "--qrels", str(d / "qrels.txt"), "--topics", str(d / "pq.csv"))
    assert r.returncode == 2 and "pq.csv" in r.stderr and "line 1" in r.stderr


def test_per_query_jsonl_reads_with_polars_default_inference(tmp_path: Path) -> None:
    """The shipped set's first no-match query is row 444: polars infers from 100 rows, so the file
    leads with the rows that show each column's type (it used to fail: a NULL-typed column)."""
    out = tmp_path / "pq.jsonl"
    r = invoke_cli("eval", "--per-query-out", str(out), "--format", "json")
    assert r.returncode == 0, r.stderr
    plain = pl.read_ndjson(out)  # default inference, no schema
    library = tooldisc.evaluate(None, None).per_query
    assert plain.height == library.height
    for name, dtype in PER_QUERY_SCHEMA.items():
        if library[name].null_count() < library.height:  # a column with values keeps its type and every value
            assert plain.schema[name] == dtype, name
    # floats through JSON text may differ in the last bit (polars writes them; nothing here rounds)
    assert_frame_equal(plain.sort("id").select(library.columns[:-1]), library.sort("id").select(library.columns[:-1]),
                       check_exact=False, rel_tol=1e-12)
    lines = out.read_text("utf-8").splitlines()
    first = [json.loads(line) for line in lines[:100]]
    assert any(row["no_match_success"] is not None for row in first)
    assert any(row["forbidden_offered"] for row in first)
    typed = tooldisc.read_per_query(out)
    assert typed.schema == PER_QUERY_SCHEMA
    assert_frame_equal(typed.sort("id"), library.sort("id"), check_exact=False, rel_tol=1e-12)


def test_read_per_query_is_public_and_types_every_format(tiny_files, exported: dict) -> None:
    d = exported["dir"]
    frame = tooldisc.read_per_query(d / "pq.csv")
    assert frame.schema == PER_QUERY_SCHEMA and isinstance(frame["offered"].dtype, pl.List)
    assert frame["first_relevant_rank"].dtype == pl.Int64 and frame["hit"].dtype == pl.Float64


def test_sealtools_names_with_spaces_round_trip_through_every_trec_file(shared: Path, tmp_path: Path) -> None:
    """Seal-Tools' 'requestFirst Aid Assistance' used to end `eval --run-out` (exit 2, nothing written).
    Encoded, the run, the qrels and a --run arm read back agree with tooldisc and with ir_measures.

    Seal-Tools' own rows, cut to keep the test quick: 15 dev queries and a query for the tool, over
    the tools they name plus the first 400 of the catalog (loading all 4,076 costs ~7 s per command).
    """
    b = shared / "benchmarks" / "sealtools"
    rows = [json.loads(line) for line in (b / "queries_dev.jsonl").read_text("utf-8").splitlines() if line.strip()]
    offered_it = {"dev-difficult-244", "dev-difficult-253", "dev-difficult-284"}  # the tool is in their top 15
    picked = [r for r in rows if r["id"] in offered_it] + rows[:12]
    picked.append({"id": "first aid 1", "query": "Request first aid assistance for an injured hiker",
                   "relevant": ["requestFirst Aid Assistance"], "difficulty": "easy", "n_gold_calls": 1})
    named = {t for r in picked for t in [*r["relevant"], *(r.get("acceptable") or ())]}
    tools = [line for i, line in enumerate((b / "tools.jsonl").read_text("utf-8").splitlines())
             if line.strip() and (i < 400 or json.loads(line)["name"] in named)]
    catalog = tmp_path / "tools.jsonl"
    catalog.write_text("\n".join(tools) + "\n", encoding="utf-8")
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(json.dumps(r) + "\n" for r in picked), encoding="utf-8")
    d = tmp_path
    r = invoke_cli("eval", "--catalog", str(catalog), "--gold", str(gold), "--k", "15", "--json",
                "--run-out", str(d / "run.trec"), "--per-query-out", str(d / "pq.parquet"), "--by", "difficulty")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert set(doc["by"]["difficulty"]) == {"easy", "difficult"}  # read from the benchmark rows
    run_text = (d / "run.trec").read_text("utf-8")
    assert "requestFirst%20Aid%20Assistance" in run_text and "first%20aid%201 Q0" in run_text
    q = invoke_cli("gold", "qrels", str(gold), "--out", str(d / "qrels.txt"), "--topics-out", str(d / "topics.tsv"))
    assert q.returncode == 0, q.stderr
    assert "first%20aid%201 0 requestFirst%20Aid%20Assistance 2" in (d / "qrels.txt").read_text("utf-8")
    _assert_ir_measures_agree(doc, d / "qrels.txt", d / "run.trec",
                              read_per_query(d / "pq.parquet").with_columns(
                                  pl.col("id").str.replace_all(" ", "%20")))
    back = invoke_cli("compare", "default", "--run", f"earlier={d / 'run.trec'}", "--catalog", str(catalog),
                   "--gold", str(gold), "--k", "15", "--json")
    assert back.returncode == 0, back.stderr
    table = json.loads(back.stdout)["table"]
    assert all(row["values"][0] == row["values"][1] for row in table), table  # the run read back is the same offers
