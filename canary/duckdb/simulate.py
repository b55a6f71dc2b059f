"""Offline check of an assignment: arm shares, sample-ratio test, independence of salts.

Hashing runs in DuckDB SQL (vectorised ``sha256``) with the exact layout of
:mod:`tooldisc.canary.assignment`, over synthetic ids (``--ids N``) or a CSV or
Parquet file of real ones (``tenant_id,user_id``). Only counts leave the database;
:func:`summarize` turns them into the report, so the Spark engine
(:mod:`tooldisc.canary.spark.simulate`) reports the same numbers. With two salts the
2×2 table of arms is tested for independence: two experiments sharing users must
not select the same users.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from tooldisc.canary.assignment import BUCKETS, bucket_sql, check_salt, sql_literal, threshold
from tooldisc.canary.stats import goodness_of_fit, independence, wilson
from tooldisc.errors import DataError, UsageError


@dataclass(frozen=True)
class SaltResult:
    salt: str
    percent: float
    counts: dict[str, int]
    shares: dict[str, dict[str, float]]
    expected_experiment_share: float
    chi_square: float
    p_value: float


@dataclass(frozen=True)
class Simulation:
    ids: int
    source: str
    salts: tuple[SaltResult, ...]
    independence: dict[str, Any] | None
    engine: str = "duckdb"


def _source(con: Any, ids: int | None, ids_file: str | None) -> tuple[str, str]:
    if (ids is None) == (ids_file is None):
        raise UsageError("give exactly one of --ids N or --ids-file F.csv|F.parquet")
    if ids is not None:
        from tooldisc.limits import check_count

        check_count("ids", ids, "--ids")
        # Synthetic ids: 997 tenants, one user id per row. range() is a single-threaded
        # source, so its integers go to a table first; the scan that hashes is parallel.
        con.execute(f"CREATE TEMP TABLE sim_ids AS SELECT range AS i FROM range({ids})")
        return ("(SELECT 'tenant-' || (i % 997)::VARCHAR AS tenant_id, "
                "'user-' || i::VARCHAR AS user_id FROM sim_ids)", f"{ids} synthetic ids")
    import duckdb

    assert ids_file is not None
    if not os.path.isfile(ids_file) or not os.access(ids_file, os.R_OK):
        raise DataError("cannot be read", file=ids_file)
    parquet = ids_file.lower().endswith((".parquet", ".pq"))
    kind = "Parquet" if parquet else "CSV"
    src = (f"read_parquet({sql_literal(ids_file)})" if parquet else
           f"read_csv({sql_literal(ids_file)}, header = true, all_varchar = true)")
    try:
        cols = [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {src}").fetchall()]
    except duckdb.Error as exc:
        raise DataError(f"cannot be read as {kind}: {' '.join(str(exc).split())[:200]}",
                        file=ids_file) from exc
    missing = [c for c in ("tenant_id", "user_id") if c not in cols]
    if missing:
        raise DataError(f"lacks required columns: {', '.join(missing)} (header must be "
                        "tenant_id,user_id)", file=ids_file)
    src = f"(SELECT tenant_id::VARCHAR AS tenant_id, user_id::VARCHAR AS user_id FROM {src})"
    bad = con.execute(
        f"SELECT count(*) FROM {src} WHERE coalesce(tenant_id, '') = '' OR coalesce(user_id, '') = ''"
    ).fetchone()[0]
    if bad:
        raise DataError(f"{bad} row(s) have an empty tenant_id or user_id", file=ids_file)
    return f"(SELECT tenant_id, user_id FROM {src})", os.path.basename(ids_file)


def check_salts(salts: list[tuple[str, float]]) -> list[int]:
    """The experiment threshold of each (salt, percent); refuses what no engine should hash."""
    if not 1 <= len(salts) <= 2:
        raise UsageError("simulate takes one or two salts")
    thresholds = []
    for salt, pct in salts:
        check_salt(salt)
        thr = threshold(pct)
        if not 0 < thr < BUCKETS:
            raise UsageError(f"--percent must be strictly between 0 and 100; got {pct}")
        thresholds.append(thr)
    return thresholds


def simulate(salts: list[tuple[str, float]], ids: int | None = None, ids_file: str | None = None,
             confidence: float = 0.95) -> Simulation:
    """Assign every id under each (salt, percent); report shares and tests."""
    from tooldisc.canary.duckdb.ingest import connect

    thresholds = check_salts(salts)
    con = connect()
    try:
        source, label = _source(con, ids, ids_file)
        arms = ", ".join(
            f"{bucket_sql(salt, 'tenant_id', 'user_id')} < {thr} AS e{i}"
            for i, ((salt, _), thr) in enumerate(zip(salts, thresholds, strict=True))
        )
        group = ", ".join(f"e{i}" for i in range(len(salts)))
        rows = con.execute(
            f"SELECT {group}, count(*) FROM (SELECT {arms} FROM {source}) GROUP BY ALL"
        ).fetchall()
    finally:
        con.close()
    return summarize(salts, thresholds, rows, label, ids_file, confidence, engine="duckdb")


def summarize(salts: list[tuple[str, float]], thresholds: list[int],
              rows: list[tuple[Any, ...]], label: str, ids_file: str | None,
              confidence: float = 0.95, engine: str = "duckdb") -> Simulation:
    """Shares, sample-ratio and independence tests from the engine's counts.

    ``rows`` are ``(in_experiment_0[, in_experiment_1], count)``: the only thing an
    engine computes, so every engine reports the same numbers from the same ids.
    """
    total = sum(r[-1] for r in rows)
    if total == 0:
        raise DataError("holds no ids", file=ids_file)
    results = []
    for i, ((salt, pct), thr) in enumerate(zip(salts, thresholds, strict=True)):
        exp = sum(r[-1] for r in rows if r[i])
        counts = {"control": total - exp, "experiment": exp}
        share = thr / BUCKETS
        test = goodness_of_fit([total - exp, exp], [1 - share, share])
        shares = {}
        for arm, n in counts.items():
            iv = wilson(n, total, confidence)
            shares[arm] = {"share": round(iv.rate, 6), "low": round(iv.low, 6),
                           "high": round(iv.high, 6)}
        results.append(SaltResult(salt, float(pct), counts, shares, share,
                                  round(test.statistic, 6), float(f"{test.p_value:.6g}")))
    indep = None
    if len(salts) == 2:
        table = [[0, 0], [0, 0]]
        for e0, e1, n in rows:
            table[int(e0)][int(e1)] += n
        try:
            t = independence(table)
            indep = {"table": {"control/control": table[0][0], "control/experiment": table[0][1],
                               "experiment/control": table[1][0],
                               "experiment/experiment": table[1][1]},
                     "chi_square": round(t.statistic, 6), "p_value": float(f"{t.p_value:.6g}"),
                     "both_experiment_expected": round(total * thresholds[0] * thresholds[1]
                                                       / BUCKETS / BUCKETS, 3)}
        except ValueError:
            indep = {"table": table, "chi_square": None, "p_value": None}
    return Simulation(ids=total, source=label, salts=tuple(results), independence=indep,
                      engine=engine)
