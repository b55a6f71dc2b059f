"""The Spark engine against the DuckDB/Python one, in ONE SparkSession (tests/canary/conftest.py).

Every test that needs the shared JVM lives in this file, so ``pytest -n 2 --dist loadfile``
starts it once. CLI tests reach that JVM through Spark Connect (``--spark-remote``); the one
test of the default local mode (a JVM of its own) is in test_spark_options.py, so it can run
beside this file. Parity data is small (a few thousand rows): parity is about rules, not size.
"""

from __future__ import annotations

import json
import random
from dataclasses import asdict
from pathlib import Path

import pytest

from tests.canary.conftest import SparkHandle
from tests.conftest import run_cli
from tooldisc.canary.assignment import bucket
from tooldisc.canary.duckdb.simulate import simulate
from tooldisc.errors import DataError

ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789-_.é漢ی '\\\"😀"


def _random_ids(n: int, seed: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    return [("".join(rng.choices(ALPHABET, k=rng.randint(1, 12))),
             "".join(rng.choices(ALPHABET, k=rng.randint(1, 16)))) for _ in range(n)]


@pytest.fixture(scope="module")
def ids_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The same 3,000 ids as CSV and as Parquet."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    d = tmp_path_factory.mktemp("spark_ids")
    pairs = _random_ids(3_000, seed=11)
    table = pa.table({"tenant_id": [p[0] for p in pairs], "user_id": [p[1] for p in pairs]})
    pq.write_table(table, d / "ids.parquet")
    pacsv.write_csv(table, d / "ids.csv")
    return {"parquet": d / "ids.parquet", "csv": d / "ids.csv"}


def test_bucket_in_spark_sql_equals_python_for_100k_random_ids(spark, tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyspark.sql import functions as F

    from tooldisc.canary.spark.simulate import bucket_column

    salt = "exp-ü'\\"
    pairs = _random_ids(100_000, seed=7)
    vectors = [("s1", "t1", "u1", 8817), ("indexed-retrieval-v1", "biz-42", "user-7", 8234),
               ("تست", "شرکت", "کاربر", 5302)]  # 9db2ff…: first 8 bytes >= 2**63
    table = pa.table({
        "salt": [salt] * len(pairs) + [v[0] for v in vectors],
        "tenant_id": [p[0] for p in pairs] + [v[1] for v in vectors],
        "user_id": [p[1] for p in pairs] + [v[2] for v in vectors],
        "expected": [bucket(salt, t, u) for t, u in pairs] + [v[3] for v in vectors],
    })
    pq.write_table(table, tmp_path / "pairs.parquet")
    frame = spark.read.parquet(str(tmp_path / "pairs.parquet"))
    # One scan: each row hashed under its own salt (a literal per salt, as production).
    on_spark = None
    for s in sorted({salt, *(v[0] for v in vectors)}):
        b = bucket_column(s, F.col("tenant_id"), F.col("user_id"))
        on_spark = (F.when(F.col("salt") == s, b) if on_spark is None
                    else on_spark.when(F.col("salt") == s, b))
    row = frame.agg(F.count("*").alias("n"),
                    F.count_if(~F.coalesce(on_spark == F.col("expected"), F.lit(False)))
                    .alias("wrong")).first()
    assert (row["n"], row["wrong"]) == (len(pairs) + len(vectors), 0)


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_simulate_on_spark_equals_duckdb(spark, ids_files: dict[str, Path], fmt: str) -> None:
    from tooldisc.canary.spark.simulate import simulate_spark

    salts = [("indexed-retrieval-v1", 25.0), ("adaptive-k-v1", 50.0)]
    on_spark = asdict(simulate_spark(spark, salts, ids_file=str(ids_files[fmt])))
    on_duckdb = asdict(simulate(salts, ids_file=str(ids_files[fmt])))
    assert (on_spark.pop("engine"), on_duckdb.pop("engine")) == ("spark", "duckdb")
    assert on_spark == on_duckdb
    assert on_spark["ids"] == 3_000


def test_synthetic_ids_on_spark_equal_duckdb(spark) -> None:
    from tooldisc.canary.spark.simulate import simulate_spark

    salts = [("s1", 5.0)]
    on_spark = asdict(simulate_spark(spark, salts, ids=20_000))
    on_duckdb = asdict(simulate(salts, ids=20_000))
    on_spark.pop("engine"), on_duckdb.pop("engine")
    assert on_spark == on_duckdb


def test_a_path_spark_cannot_read_names_it(spark) -> None:
    from tooldisc.canary.spark.read import locate, read_raw

    missing = "file:///nonexistent-tooldisc/ids/*.parquet"
    with pytest.raises(DataError) as info:
        read_raw(spark, locate(missing, None)).columns  # noqa: B018
    assert str(info.value).startswith(missing + ": Spark cannot read it")


def test_cli_unreadable_remote_path_is_one_line_exit_2(spark_handle: SparkHandle) -> None:
    missing = "file:///nonexistent-tooldisc/ids.parquet"
    res = run_cli("canary", "simulate", "--salt", "s", "--percent", "10", "--ids-file", missing,
                  "--engine", "spark", "--spark-remote", spark_handle.remote)
    assert res.returncode == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {missing}: Spark cannot read it"), lines
    assert len(lines[0].encode()) <= 300


# -- the verdict: both engines, byte for byte ---------------------------------------------

def _write(profile: str, scenario: str, path: Path, experiment: str | None = None) -> Path:
    if profile == "interleaving":
        from tooldisc.canary.synthetic.interleaving import synthesize_interleaving

        synthesize_interleaving(path, 3_000, scenario, percent=50, seed=3,
                                **({"experiment": experiment} if experiment else {}))
    elif profile == "canary":
        from tooldisc.canary.synthetic.events import synthesize

        synthesize(path, 3_000, scenario, percent=25, seed=3,
                   **({"experiment": experiment} if experiment else {}))
    else:
        from tooldisc.canary.synthetic.shadow import synthesize_shadow

        synthesize_shadow(path, 300, scenario, seed=3,
                          **({"experiment": experiment} if experiment else {}))
    return path


def _verdict_json(profile: str, experiment: str, **where) -> str:
    from tooldisc.canary.profiles import profiles
    from tooldisc.canary.verdict import run_verdict
    from tooldisc.cli.reporting import report_text

    prof = profiles()[profile]
    _, report = run_verdict(prof.schema, experiment, profile_name=profile, **where)
    return report_text(report, "verdict", "json")


def _both(spark, profile: str, location: str, experiment: str | None = None) -> tuple[str, str]:
    """Verdict JSON from DuckDB and from Spark over the same location."""
    from tooldisc.canary.profiles import profiles
    from tooldisc.canary.spark.engine import SparkEngine
    from tooldisc.canary.spark.read import locate

    prof = profiles()[profile]
    experiment = experiment or prof.default_experiment
    on_duckdb = _verdict_json(profile, experiment, events=location)
    engine = SparkEngine.open(spark, locate(location, None), prof.schema)
    try:
        on_spark = _verdict_json(profile, experiment, engine=engine, events=location)
    finally:
        engine.close()
    return on_duckdb, on_spark


@pytest.mark.parametrize("profile", ["canary", "shadow", "interleaving"])
def test_every_scenario_same_verdict_json_parquet(spark, tmp_path: Path, profile: str) -> None:
    """Every scenario of the profile, each under its own experiment name, in one folder of
    Parquet files that both engines open once (one JVM cache, not one per scenario).

    Per scenario, Spark over the folder must give the JSON DuckDB gives over the
    scenario's file alone: parity, and attribution keeping the other scenarios out.
    """
    from tooldisc.canary.profiles import profiles
    from tooldisc.canary.spark.engine import SparkEngine
    from tooldisc.canary.spark.read import locate

    prof = profiles()[profile]
    scenarios = sorted(prof.scenarios)
    root = tmp_path / "events"
    for sc in scenarios:
        _write(profile, sc, root / f"{sc}.parquet", experiment=f"exp-{sc}")
    import pyarrow.parquet as pq

    rows = {sc: pq.read_metadata(root / f"{sc}.parquet").num_rows for sc in scenarios}
    engine = SparkEngine.open(spark, locate(str(root), None), prof.schema)
    differ, failed_gates, files = [], set(), set()
    try:
        for sc in scenarios:
            alone = json.loads(_verdict_json(profile, f"exp-{sc}", events=str(root / f"{sc}.parquet")))
            on_spark = json.loads(_verdict_json(profile, f"exp-{sc}", engine=engine))
            assert alone.pop("files") == [{"path": f"{sc}.parquet", "rows": rows[sc]}]
            files.add(json.dumps(on_spark.pop("files")))  # the folder's files, as DuckDB names them
            if on_spark != alone:
                differ.append(sc)
            failed_gates |= {g["name"] for g in on_spark["gates"] if g["status"] == "fail"}
    finally:
        engine.close()
    assert differ == [], differ
    assert [json.loads(f) for f in files] == [
        [{"path": f"{sc}.parquet", "rows": rows[sc]} for sc in scenarios]]
    assert len(scenarios) >= 5 and len(failed_gates) >= 3, failed_gates  # scenarios differ


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
@pytest.mark.parametrize(("profile", "scenario"), [("canary", "corrupt_rows"),
                                                    ("shadow", "corrupt_rows")])
def test_two_scenarios_in_text_formats(spark, tmp_path: Path, profile: str, scenario: str,
                                       fmt: str) -> None:
    path = _write(profile, scenario, tmp_path / f"{scenario}.{fmt}")
    on_duckdb, on_spark = _both(spark, profile, str(path))
    assert on_spark == on_duckdb


def test_interleaved_rows_read_and_judged_alike_in_jsonl(spark, tmp_path: Path) -> None:
    """Schema version 3 (teams, credit) through both engines: an interleaving window with every
    malformed team string of tests/canary/test_interleaving.py mixed in (JSONL, where a value's
    JSON type matters too): the same quarantine reasons and the same verdict JSON. (CSV reads a
    team string as any text column: tests/canary/test_interleaving.py covers it on DuckDB.)"""
    from tests.canary.test_interleaving import BAD, GOOD

    path = _write("interleaving", "no_preference", tmp_path / "w.jsonl")
    bad = [{**GOOD, **change, "event_id": change.get("event_id", f"00000000-0000-4000-8000-{i:012d}")}
           for i, (change, _) in enumerate(BAD)]
    with path.open("a") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in bad)
    on_duckdb, on_spark = _both(spark, "interleaving", str(path), "ranking-v2")
    assert on_spark == on_duckdb
    reasons = json.loads(on_duckdb)["quarantine"]["reasons"]
    assert sum(reasons.values()) == len(BAD) and set(reasons) == {r for _, r in BAD}


def test_hive_partitioned_directory(spark, tmp_path: Path) -> None:
    """``percent=25/day=N/part.parquet``: the percent column comes from the folder names."""
    import pyarrow.parquet as pq

    whole = pq.read_table(_write("canary", "corrupt_rows", tmp_path / "all.parquet"))
    root = tmp_path / "events"
    rows = whole.num_rows
    for day, start in enumerate(range(0, rows, rows // 3)):
        part = whole.slice(start, rows // 3).drop(["percent"])
        folder = root / "percent=25" / f"day={day}"
        folder.mkdir(parents=True)
        pq.write_table(part, folder / "part.parquet")
    on_duckdb, on_spark = _both(spark, "canary", str(root))
    assert on_spark == on_duckdb
    # the same folder as a remote location (a URI: Spark lists it and discovers the hive
    # columns itself): the same verdict; its files named as Spark names them
    from tooldisc.canary.events import EVENT_SCHEMA
    from tooldisc.canary.spark.engine import SparkEngine
    from tooldisc.canary.spark.read import locate

    engine = SparkEngine.open(spark, locate(root.as_uri() + "/", None, "parquet"), EVENT_SCHEMA)
    try:
        remote = json.loads(_verdict_json("canary", "indexed-retrieval-v1", engine=engine))
    finally:
        engine.close()
    local = json.loads(on_duckdb)
    assert [f["rows"] for f in remote.pop("files")] == [f["rows"] for f in local.pop("files")]
    assert remote == local


def _with_copies(path: Path) -> Path:
    """``path``'s events plus exact copies of its first 40 and one copy of the first that
    conflicts (another latency, and a tenant leak only this copy reports)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    first = table.slice(0, 1)
    conflict = first.set_column(first.schema.get_field_index("latency_ms"), "latency_ms",
                                pc.add(first["latency_ms"], 1.0))
    conflict = conflict.set_column(conflict.schema.get_field_index("tenant_leak"), "tenant_leak",
                                   pa.array([True]))
    out = path.with_name("copies.parquet")
    pq.write_table(pa.concat_tables([table, table.slice(0, 40), conflict]), out)
    return out


def test_cli_verdict_of_a_table_through_spark_connect(spark, spark_handle: SparkHandle,
                                                      tmp_path: Path) -> None:
    """The real command through Connect, judging a ``--table`` (a global view of the same
    JVM) whose event ids repeat, one with conflicting copies: the same JSON bar ``engine``,
    and the same exit code, as DuckDB over the file behind it (judged in-process; one
    subprocess). So de-duplication runs through Connect too, and conflicting copies merge
    alike (a security flag any copy reports wins: ROLLBACK)."""
    path = _with_copies(_write("canary", "slow", tmp_path / "slow.parquet"))
    spark.read.parquet(str(path)).createOrReplaceGlobalTempView("slow_events")
    try:
        remote = run_cli("canary", "verdict", "--experiment", "indexed-retrieval-v1", "--json",
                         "--table", "global_temp.slow_events", "--engine", "spark",
                         "--spark-remote", spark_handle.remote)
    finally:
        spark.catalog.dropGlobalTempView("slow_events")
    assert remote.returncode == 20, remote.stderr
    a = json.loads(_verdict_json("canary", "indexed-retrieval-v1", events=str(path)))
    b = json.loads(remote.stdout)
    assert b.pop("engine") == "spark" and "engine" not in a
    assert a.pop("files") == [{"path": "copies.parquet", "rows": 3_041}]
    assert b.pop("files") == [{"path": "global_temp.slow_events", "rows": 3_041}]
    assert a == b and remote.stderr == ""
    assert (b["duplicates"]["v2_ids_repeated"], b["duplicates"]["v2_ids_conflicting"]) == (40, 1)


def test_an_unreadable_table_names_it(spark) -> None:
    """A table Spark cannot read is a DataError naming it (the CLI's one line, exit 2, for
    such an error is tested through Connect with a path, above)."""
    from tooldisc.canary.profiles import profiles
    from tooldisc.canary.spark.engine import SparkEngine
    from tooldisc.canary.spark.read import locate

    with pytest.raises(DataError) as info:
        SparkEngine.open(spark, locate(None, "nosuch.events"), profiles()["canary"].schema)
    assert str(info.value).startswith("nosuch.events: Spark cannot read it"), str(info.value)


# -- telemetry read as exactly one thing: every re-encoding, both engines ---------------------

def _typed_rows(con_or_spark, view: str, name, spark: bool) -> list[tuple]:
    """Every typed row of a reader's view (schema columns, reason, file as reports name it);
    timestamps as epoch microseconds, so no time zone enters the comparison."""
    from tooldisc.canary.events import EVENT_SCHEMA

    cols = ["unix_micros(ts)" if spark else "epoch_us(ts)"] + [
        f"`{c}`" if spark else f'"{c}"' for c in EVENT_SCHEMA.names if c != "ts"]
    sql = f"SELECT {', '.join(cols)}, _reason, _file FROM {view}"
    rows = con_or_spark.sql(sql).collect() if spark else con_or_spark.execute(sql).fetchall()
    return sorted(((*tuple(r[:-1]), name(r[-1])) for r in rows), key=repr)


@pytest.mark.fuzz
def test_spark_reads_every_re_encoding_as_duckdb_does(spark, tmp_path: Path) -> None:
    """Windows of every re-encoding of a security incident (tests/canary/telemetry_fuzz.py),
    one per format — JSONL with gzip, zstd and moved files, CSV, Parquet with per-file
    column types (a flag as int, float, string or list, an experiment as a list, an Arrow
    ``null`` column) — opened once each in the shared session: Spark's typed rows equal
    DuckDB's row for row (value, quarantine reason and file), and each experiment sees
    the rows the oracle says may carry an incident. Every (re-encoding, placement) of
    each format is in the sample (≥ 20 under CI=true, ≥ 200 under make fuzz)."""
    from tests.canary import telemetry_fuzz as tf
    from tests.fuzzing import examples
    from tooldisc.canary.duckdb.ingest import connect, display_name, open_rows
    from tooldisc.canary.events import EVENT_SCHEMA
    from tooldisc.canary.spark.engine import SPARK, SparkEngine, attribution
    from tooldisc.canary.spark.read import locate

    total = examples(20, fuzz=200, local=20)
    checked = 0
    for n, fmt in enumerate(tf.FORMATS):
        combos = len(tf.CONTENT[fmt]) * len(tf.PLACEMENT[fmt])
        size = max(combos + combos // 7 + 1, -(-total // len(tf.FORMATS)))
        rng = random.Random(100 + n)
        window = tf.write_window(tmp_path / fmt, fmt, tf.cases_for(
            fmt, [rng.getrandbits(32) for _ in range(size)], cover_all=True), seed=n)
        con, root = connect(), str(window.root)
        try:
            open_rows(con, root, EVENT_SCHEMA)
            on_duckdb = _typed_rows(con, "rows_all", lambda p, root=root: display_name(root, p), False)
        finally:
            con.close()
        engine = SparkEngine.open(spark, locate(str(window.root), None), EVENT_SCHEMA)
        try:
            on_spark = _typed_rows(spark, engine.view, engine._name, True)
            spark.createDataFrame([(c.experiment,) for c in window.cases], "name string") \
                .createOrReplaceTempView("planted")
            seen = {r[0]: (int(r[1]), int(r[2])) for r in spark.sql(tf.security_sql(
                engine.view, "planted", SPARK, attribution("p.name"))).collect()}
        finally:
            engine.close()
        assert len(on_spark) == len(on_duckdb) > 0, fmt
        differ = [(a, b) for a, b in zip(on_duckdb, on_spark, strict=True) if a != b]
        assert not differ, (fmt, differ[:3])
        assert tf.violations(window, seen) == [], fmt
        checked += len(window.cases)
    assert checked >= total


def test_spark_refuses_what_duckdb_refuses_before_it_starts(tmp_path: Path) -> None:
    """A hidden file, or a Parquet/CSV file naming a column twice (letter case ignored),
    is refused naming it by both engines; Spark's check runs before any JVM starts."""
    from tests.canary import telemetry_fuzz as tf
    from tooldisc.canary.duckdb.ingest import connect, open_rows
    from tooldisc.canary.events import EVENT_SCHEMA
    from tooldisc.canary.spark.read import locate

    rng = random.Random(9)
    for fmt in tf.FORMATS:
        for kind in tf.REFUSAL[fmt]:
            root = tmp_path / f"{fmt}-{kind}"
            cases = tf.cases_for(fmt, [rng.getrandbits(32) for _ in range(2)], clean_every=1)
            window = tf.write_window(root, fmt, cases, seed=rng.getrandbits(32))
            path = tf.add_refusal(window, kind, cases[0], 2)
            with pytest.raises(DataError) as on_spark:
                locate(str(root), None)
            con = connect()
            try:
                with pytest.raises(DataError) as on_duckdb:
                    open_rows(con, str(root), EVENT_SCHEMA)
            finally:
                con.close()
            assert str(on_spark.value) == str(on_duckdb.value), (fmt, kind)
            assert str(on_spark.value).startswith(f"{path}: "), str(on_spark.value)
