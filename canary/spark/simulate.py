"""``canary simulate`` on Spark: the same buckets, hashed where the ids already are.

The bucket is DESIGN §7's layout written with Spark SQL functions: ``sha2(key, 256)``
gives lowercase hex of the UTF-8 key; its first 16 hex digits are the first 8 bytes;
``conv(…, 16, 10)`` reads them as an *unsigned* 64-bit number (as decimal text), and
a ``DECIMAL(20, 0)`` holds every such value, so ``mod 10,000`` never sees a signed
overflow. Only counts per arm leave Spark; :func:`tooldisc.canary.duckdb.simulate.summarize`
turns them into the report, so both engines print the same JSON (bar ``engine``).
"""

from __future__ import annotations

import posixpath
from typing import Any

from tooldisc.canary.assignment import BUCKETS, SEPARATOR
from tooldisc.canary.duckdb.simulate import Simulation, check_salts, summarize
from tooldisc.canary.spark.read import Location, locate, read_raw, reading
from tooldisc.errors import DataError, UsageError

ID_COLUMNS = ("tenant_id", "user_id")


def bucket_column(salt: str, tenant: Any, user: Any) -> Any:
    """A Spark Column with the bucket (0–9999) of ``salt:tenant:user``.

    The salt enters as a literal value, never as SQL text, so any character is safe.
    """
    from pyspark.sql import functions as F

    key = F.concat(F.lit(salt + SEPARATOR), tenant.cast("string"), F.lit(SEPARATOR),
                   user.cast("string"))
    first8 = F.substring(F.sha2(key, 256), 1, 16)
    unsigned = F.conv(first8, 16, 10).cast("decimal(20,0)")
    return (unsigned % F.lit(BUCKETS)).cast("int")


def _ids(spark: Any, ids: int | None, ids_file: str | None) -> tuple[Any, str, Location | None]:
    from pyspark.sql import functions as F

    if (ids is None) == (ids_file is None):
        raise UsageError("give exactly one of --ids N or --ids-file F.csv|F.parquet")
    if ids is not None:
        if ids < 1:
            raise UsageError(f"--ids must be an integer >= 1; got {ids}")
        frame = spark.range(ids).select(
            F.concat(F.lit("tenant-"), (F.col("id") % 997).cast("string")).alias("tenant_id"),
            F.concat(F.lit("user-"), F.col("id").cast("string")).alias("user_id"))
        return frame, f"{ids} synthetic ids", None
    assert ids_file is not None
    loc = locate(ids_file, None)
    if loc.format not in {"csv", "parquet"}:
        raise DataError(f"ids must be CSV or Parquet; got {loc.format}", file=ids_file)
    frame = read_raw(spark, loc)
    missing = [c for c in ID_COLUMNS if c not in frame.columns]
    if missing:
        raise DataError(f"lacks required columns: {', '.join(missing)} (header must be "
                        "tenant_id,user_id)", file=ids_file)
    frame = frame.select(*(F.col(c).cast("string").alias(c) for c in ID_COLUMNS))
    return frame, posixpath.basename(ids_file.rstrip("/")), loc


def prepare(ids: int | None, ids_file: str | None) -> Location | None:
    """Checks that need no Spark (a local ids file that is missing), done before it starts."""
    if ids_file is not None and ids is None:
        return locate(ids_file, None)
    return None


def simulate_spark(spark: Any, salts: list[tuple[str, float]], ids: int | None = None,
                   ids_file: str | None = None, confidence: float = 0.95) -> Simulation:
    """Assign every id under each (salt, percent) in Spark; report shares and tests."""
    from pyspark.sql import functions as F

    thresholds = check_salts(salts)
    frame, label, _ = _ids(spark, ids, ids_file)
    if ids_file is not None:
        t, u = F.col("tenant_id"), F.col("user_id")
        bad_row = (F.coalesce(t, F.lit("")) == "") | (F.coalesce(u, F.lit("")) == "")
        flags = [bad_row.alias("bad")]
    else:
        flags = [F.lit(False).alias("bad")]
    arms = [(bucket_column(salt, F.col("tenant_id"), F.col("user_id")) < thr).alias(f"e{i}")
            for i, ((salt, _), thr) in enumerate(zip(salts, thresholds, strict=True))]
    group = [f"e{i}" for i in range(len(salts))]
    with reading(ids_file or label):
        counted = frame.select(*flags, *arms).groupBy("bad", *group).count().collect()
    bad = sum(r["count"] for r in counted if r["bad"])
    if bad:
        raise DataError(f"{bad} row(s) have an empty tenant_id or user_id", file=ids_file)
    rows = [(*(r[g] for g in group), r["count"]) for r in counted]
    return summarize(salts, thresholds, rows, label, ids_file, confidence, engine="spark")
