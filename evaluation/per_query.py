"""Per-query results as a polars table: one row per gold query, no-match queries included.

What ranx calls ``return_per_query`` and ``trec_eval -q`` prints: for each query its
slice labels, the offer, where the first primary tool landed, which forbidden tools
were offered, and every eval measure's value for that query. The mean of a measure's
non-null column equals the eval total, because both come from the same rows of
:func:`tooldisc.evaluation.run.score_run`.

Measure columns carry the bare measure name (``hit``, ``nDCG``…); the ``cutoff``
column holds the K they are taken at, so runs at different K concatenate. A measure is
null for a query outside its domain (a no-match query has no ``MRR``).

Files: ``.parquet``, ``.csv`` or ``.jsonl`` by extension. CSV has no list type, so the
list columns (``expected``, ``offered``, ``scores``, ``forbidden_offered``) are written
as JSON arrays inside the cell (``["a","b"]``), which any CSV reader returns as text
and ``json.loads`` turns back into a list. :func:`read_per_query` reads any of the three
back with :data:`PER_QUERY_SCHEMA`'s types.

JSON Lines carries no schema, and ``polars.read_ndjson`` infers one from the first 100
lines: a column null (or an empty list) in all of them is read as ``Null`` and loses
every later value (``MRR`` on a set whose first 100 queries all match no tool, or
``forbidden_offered`` when the first 100 offers are clean). So the JSONL file starts
with the few queries that show every column's type — for each column that has a value
somewhere, the first query that has one (a non-empty list for list columns) — and then
the rest, each part in gold order. Every row is the same; only the file's row order
differs from the table's, and ``id`` names each row.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from tooldisc.errors import UsageError

if TYPE_CHECKING:
    from tooldisc.evaluation.run import RunResult, Scores

# Measure columns, in eval order; each holds that measure's per-query value.
MEASURE_COLUMNS: tuple[str, ...] = ("hit", "complete", "recall", "MRR", "P", "nDCG", "forbidden",
                                    "no_match_success", "false_abstention", "avg_k")
PER_QUERY_SCHEMA: pl.Schema = pl.Schema({
    "id": pl.String,
    "query": pl.String,
    "category": pl.String,
    "difficulty": pl.String,
    "hard_case": pl.String,
    "intent": pl.String,
    "matched": pl.Boolean,
    "no_match": pl.Boolean,
    "expected": pl.List(pl.String),  # primary tools, as labelled
    "cutoff": pl.Int64,  # the K measures are taken at (adaptive: the cap)
    "k": pl.Int64,  # the K discovery used for this query
    "offered": pl.List(pl.String),  # best first, cut at ``cutoff``
    "scores": pl.List(pl.Float64),  # discovery's score of each offered tool
    "abstained": pl.Boolean,  # an empty offer
    "first_relevant_rank": pl.Int64,  # 1-based rank of the first primary tool offered; null if none
    "forbidden_offered": pl.List(pl.String),  # what forbidden@K counted, in offer order
    **dict.fromkeys(MEASURE_COLUMNS, pl.Float64),
    "latency_ms": pl.Float64,  # only when timings were asked for; else null
})
LIST_COLUMNS: tuple[str, ...] = tuple(n for n, t in PER_QUERY_SCHEMA.items() if isinstance(t, pl.List))
FORMATS: dict[str, str] = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".jsonl": "jsonl",
                           ".ndjson": "jsonl"}


def per_query_frame(result: RunResult, scores: Scores, *, timings: bool = False) -> pl.DataFrame:
    """The per-query table of ``result``, read from ``scores`` (its eval measures)."""
    from tooldisc.evaluation.run import forbidden_offered, side_effects

    by_name = {m.NAME: m for m in scores.measures if m.NAME in MEASURE_COLUMNS}
    effects = side_effects(result.catalog)
    cutoff = result.cutoff
    rows: dict[str, list] = {name: [] for name in PER_QUERY_SCHEMA}
    for q, r in zip(result.gold.queries, result.queries, strict=True):
        names = r.names[:cutoff]
        primary = set(q.primary_expected_tools)
        first = next((i + 1 for i, t in enumerate(names) if t in primary), None)
        values = {
            "id": q.id, "query": q.query, "category": q.category, "difficulty": q.difficulty,
            "hard_case": q.hard_case, "intent": q.intent, "matched": q.matched, "no_match": q.no_match,
            "expected": list(q.primary_expected_tools), "cutoff": cutoff, "k": r.k, "offered": list(names),
            "scores": [float(s) for s in r.scores[:cutoff]], "abstained": not names,
            "first_relevant_rank": first, "forbidden_offered": forbidden_offered(q, names, effects),
            "latency_ms": r.latency_ms if timings else None,
        }
        for name in MEASURE_COLUMNS:
            m = by_name.get(name)
            values[name] = None if m is None else scores.values[m].get(q.id)
        for name, value in values.items():
            rows[name].append(value)
    return pl.DataFrame(rows, schema=PER_QUERY_SCHEMA)


def per_query_format(path: str | Path) -> str:
    """``parquet``, ``csv`` or ``jsonl`` from the file name; anything else is a usage error."""
    fmt = FORMATS.get(Path(path).suffix.lower())
    if fmt is None:
        raise UsageError(f"--per-query-out {path}: name a .parquet, .csv or .jsonl file")
    return fmt


def per_query_bytes(frame: pl.DataFrame, fmt: str) -> bytes:
    """The table as file bytes in ``fmt``; the same frame always gives the same bytes."""
    buf = io.BytesIO()
    if fmt == "parquet":
        frame.write_parquet(buf, statistics=False)
    elif fmt == "jsonl":
        _typed_first(frame).write_ndjson(buf)
    elif fmt == "csv":
        flat = frame.with_columns(
            pl.Series(name, [json.dumps(v, ensure_ascii=False) for v in frame[name].to_list()], dtype=pl.String)
            for name in LIST_COLUMNS if name in frame.columns)
        flat.write_csv(buf)
    else:
        raise UsageError(f"per-query format must be parquet, csv or jsonl; got {fmt!r}")
    return buf.getvalue()


# polars.read_ndjson's default infer_schema_length: the JSONL witnesses must come first.
NDJSON_INFER_ROWS = 100


def _typed_first(frame: pl.DataFrame) -> pl.DataFrame:
    """The rows that show each column's type (the first holding a value, or a non-empty list), then the rest."""
    witnesses: list[int] = []
    for name, dtype in frame.schema.items():
        col = frame[name]
        informative = col.list.len().fill_null(0) > 0 if isinstance(dtype, pl.List) else col.is_not_null()
        hits = informative.arg_true()
        if hits.len() and int(hits[0]) not in witnesses:
            witnesses.append(int(hits[0]))
    first = sorted(witnesses)
    if len(first) > NDJSON_INFER_ROWS:  # more typed columns than inferred rows: cannot happen with this schema
        raise UsageError(f"per-query JSONL: {len(first)} rows needed to show every column's type")
    rest = [i for i in range(frame.height) if i not in set(first)]
    return frame[first + rest] if first else frame


def read_per_query(path: str | Path) -> pl.DataFrame:
    """A per-query file (``--per-query-out``: parquet, CSV or JSONL) back as the table, with the schema's types.

    CSV list cells are decoded from their JSON arrays; JSONL is read with
    :data:`PER_QUERY_SCHEMA` (its rows start with the ones that show each column's
    type, so a plain ``polars.read_ndjson`` reads it too).
    """
    fmt = per_query_format(path)
    if fmt == "parquet":
        return pl.read_parquet(path)
    if fmt == "jsonl":
        return pl.read_ndjson(path, schema=PER_QUERY_SCHEMA)
    text_schema = {n: (pl.String if n in LIST_COLUMNS else t) for n, t in PER_QUERY_SCHEMA.items()}
    raw = pl.read_csv(path, schema=text_schema)
    return raw.with_columns(
        pl.Series(n, [json.loads(v) for v in raw[n].to_list()], dtype=PER_QUERY_SCHEMA[n]) for n in LIST_COLUMNS)
