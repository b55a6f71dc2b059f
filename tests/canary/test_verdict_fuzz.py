"""The verdict fuzz (issue 25, item 7): a security incident, however it is re-encoded,
never yields PROMOTE. Windows, re-encodings and the oracle: tests/canary/telemetry_fuzz.py.

- readers: ``examples(10_000)`` incident rows (CI), many experiments per window and one
  DuckDB connection per window, through the reader every command calls (``open_rows``):
  each experiment sees exactly the rows that may carry an incident for it, as true or
  unknown; a window holding a hidden file or a column named twice is refused;
- end to end: ``tooldisc canary verdict`` per experiment in processes of their own, under
  gates that PROMOTE a clean experiment of this size and tolerate 90% quarantined rows:
  every experiment with an incident is not PROMOTEd, its security gate failed or not
  judged, and every clean one is PROMOTEd;
- planted bugs (a reader that takes a repeated key's first copy, a security gate that
  lets the quarantine count outweigh a leak) make the same checks fail.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.canary import telemetry_fuzz as tf
from tests.fuzzing import examples
from tooldisc.errors import DataError

PER_WINDOW = 2_500
CLEAN_EVERY = 16
READER_EXAMPLES = examples(10_000)
# windows enough for READER_EXAMPLES incidents (the clean experiments are checked too)
READER_WINDOWS = max(-(-READER_EXAMPLES // (PER_WINDOW - PER_WINDOW // CLEAN_EVERY)), 1)
E2E_EXAMPLES = examples(40, fuzz=500, local=10)
E2E_PER_WINDOW = 10


def check_window(tmp: Path, fmt: str, seed: int, n: int) -> int:
    """One window of ``n`` experiments (1 in 16 without an incident) through the DuckDB
    reader, plus one re-encoding that makes the window bad input; the property holds, or
    the assertion says where not. Returns the incidents checked."""
    rng = random.Random(seed)
    cases = tf.cases_for(fmt, [rng.getrandbits(32) for _ in range(n)], clean_every=CLEAN_EVERY)
    window = tf.write_window(tmp / "w", fmt, cases, seed=seed)
    bad = tf.violations(window, tf.duckdb_security(window))
    assert not bad, f"{len(bad)} violation(s), e.g. {bad[:5]}"
    check_refusal(tmp / "r", fmt, rng)
    return sum(c.content is not None for c in cases) + 1


def check_refusal(root: Path, fmt: str, rng: random.Random) -> None:
    """A small window (clean rows) plus a file holding an incident that makes it bad
    input: the reader refuses it, naming that file."""
    from tooldisc.canary.duckdb.ingest import connect, open_rows
    from tooldisc.canary.events import EVENT_SCHEMA

    kind = rng.choice(tf.REFUSAL[fmt])
    cases = tf.cases_for(fmt, [rng.getrandbits(32) for _ in range(3)], clean_every=1)
    window = tf.write_window(root, fmt, cases, seed=rng.getrandbits(32))
    path = tf.add_refusal(window, kind, cases[0], rng.randrange(1000))
    con = connect()
    try:
        with pytest.raises(DataError) as info:
            open_rows(con, str(root), EVENT_SCHEMA)
    finally:
        con.close()
    assert str(path) in str(info.value), (kind, str(info.value))


@pytest.mark.fuzz
@settings(max_examples=READER_WINDOWS, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(fmt=st.sampled_from(["jsonl", "jsonl", "csv", "parquet"]), seed=st.integers(0, 2**32 - 1))
def test_no_re_encoding_of_an_incident_hides_it_from_the_readers(tmp_path_factory: pytest.TempPathFactory,
                                                                 fmt: str, seed: int) -> None:
    check_window(tmp_path_factory.mktemp("fuzz"), fmt, seed, min(PER_WINDOW, READER_EXAMPLES))


# -- end to end -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def forked_cli():
    cli = tf.ForkedCli()
    yield cli
    cli.close()


def e2e_window(tmp: Path, fmt: str, seed: int, n: int, run) -> list[str]:
    """``n`` experiments of 120 clean rows per arm, all but one with an incident, judged by
    ``run(argv) -> (exit, stdout, stderr)``: every one from a database the window was
    ingested into (``--db``), the clean one and one other also from the files
    (``--events``). Returns what broke the property."""
    rng = random.Random(seed)
    cases = tf.cases_for(fmt, [rng.getrandbits(32) for _ in range(n)], clean_every=n)
    window = tf.write_window(tmp / "w", fmt, cases, rows_per_arm=120, seed=seed)
    gates = tf.lenient_gates(tmp / "gates.yaml")
    db = tmp / "events.duckdb"
    code, _, err = run(["canary", "ingest", str(window.root), "--db", str(db)])
    assert code == 0, err
    held = tf.oracle(window)
    from_files = {cases[-1].experiment, rng.choice(cases[:-1]).experiment}
    bad = []
    for case in cases:
        for source in (["--db", str(db)], ["--events", str(window.root)]):
            if source[0] == "--events" and case.experiment not in from_files:
                continue
            code, out, err = run(["canary", "verdict", *source, "--experiment", case.experiment,
                                  "--gates", str(gates), "--json"])
            what = f"{case.experiment} ({case.content}, {case.placement}, {case.flag}; {source[0]})"
            if code not in (0, 10, 20):
                bad.append(f"{what}: exit {code}: {err.strip()[-300:]}")
                continue
            report = json.loads(out)
            security = next(g for g in report["gates"] if g["name"] == "security")["status"]
            if held[case.experiment] and (code == 0 or security == "pass"):
                bad.append(f"{what}: {report['verdict']} with the security gate {security}")
            if not held[case.experiment] and code != 0:
                bad.append(f"{what} (clean): {report['verdict']}, expected PROMOTE: "
                           f"{[(g['name'], g['status']) for g in report['gates'] if g['status'] != 'pass']}")
    return bad


@pytest.mark.fuzz
@settings(max_examples=max(E2E_EXAMPLES // E2E_PER_WINDOW, 1), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(fmt=st.sampled_from(tf.FORMATS), seed=st.integers(0, 2**32 - 1))
def test_no_re_encoding_of_an_incident_is_promoted_by_the_command(
        tmp_path_factory: pytest.TempPathFactory, forked_cli: tf.ForkedCli, fmt: str, seed: int) -> None:
    tmp = tmp_path_factory.mktemp("e2e")
    bad = e2e_window(tmp, fmt, seed, E2E_PER_WINDOW, lambda argv: forked_cli.run(argv, tmp))
    assert not bad, bad


def test_a_refused_window_is_one_line_exit_2_through_the_command(tmp_path: Path,
                                                                  forked_cli: tf.ForkedCli) -> None:
    """Every refusal re-encoding, through the command: exit 2, one line naming the file."""
    rng = random.Random(5)
    for fmt in tf.FORMATS:
        for kind in tf.REFUSAL[fmt]:
            root = tmp_path / f"{fmt}-{kind}"
            cases = tf.cases_for(fmt, [rng.getrandbits(32) for _ in range(2)], clean_every=1)
            window = tf.write_window(root, fmt, cases, seed=rng.getrandbits(32))
            path = tf.add_refusal(window, kind, cases[0], 1)
            code, out, err = forked_cli.run(["canary", "verdict", "--events", str(root),
                                             "--experiment", cases[0].experiment, "--json"], tmp_path)
            lines = err.strip().splitlines()
            assert code == 2 and out == "", (fmt, kind, code, err)
            assert len(lines) == 1 and lines[0].startswith(f"error: {path}: "), (fmt, kind, lines)


# -- planted bugs -------------------------------------------------------------------------

def _first_copy_rows(table: str, present: list[str], schema: object) -> str:
    """A planted reader bug: a repeated key is read as its first copy (DuckDB's own
    ``json_extract`` behaviour, and this reader's before issue 25)."""
    from tooldisc.canary.duckdb.ingest import ident
    from tooldisc.canary.sql import sql_literal
    from tooldisc.canary.validation import JSON_TAG_PREFIX

    paths = ", ".join(sql_literal(f'$."{c}"') for c in present)
    ok = "json_valid(line) AND json_type(line) = 'OBJECT'"
    cols = [f"__v[{i}] AS {ident(c)}, __t[{i}] AS {ident(JSON_TAG_PREFIX + c)}"
            for i, c in enumerate(present, start=1)]
    return (f"(SELECT {', '.join(cols)}, __bad FROM (SELECT CASE WHEN {ok} THEN "
            f"json_extract_string(line, [{paths}]) END AS __v, CASE WHEN {ok} THEN "
            f"json_type(line, [{paths}]) END AS __t, CASE WHEN NOT json_valid(line) THEN "
            f"'json: unparseable line' WHEN json_type(line) <> 'OBJECT' THEN 'json: line is not an "
            f"object' WHEN len(json_keys(line)) <> len(list_distinct(json_keys(line))) THEN "
            f"'json: duplicate key' END AS __bad FROM {table}))")


def test_a_reader_that_takes_the_first_copy_fails_the_reader_property(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tooldisc.canary.duckdb.ingest as ingest

    check_window(tmp_path / "ok", "jsonl", 1, 300)  # passes as the code stands
    monkeypatch.setattr(ingest, "json_rows", _first_copy_rows)
    with pytest.raises(AssertionError, match=r"violation\(s\).*incident: dup"):
        check_window(tmp_path / "planted", "jsonl", 1, 300)


def test_a_quarantine_that_outweighs_a_leak_fails_the_end_to_end_property(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same check in-process (a planted bug does not cross into a subprocess): a
    security gate that counts only valid rows PROMOTEs a quarantined leak, since 90%
    quarantined rows are tolerated."""
    from dataclasses import replace

    import tooldisc.canary.gates as gates
    from tooldisc.cli.app import main

    def run(argv: list[str]) -> tuple[int, str, str]:
        import contextlib
        import io

        out, err = io.StringIO(), io.StringIO()
        code = 0
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main(argv)
            except SystemExit as exc:
                code = int(exc.code or 0)
        return code, out.getvalue(), err.getvalue()

    assert e2e_window(tmp_path / "ok", "jsonl", 3, 3, run) == []
    real = gates.gate_security

    def valid_rows_only(ev: gates.Evidence, cfg: object, cmp: object = None) -> gates.GateResult:
        return real(replace(ev, quarantined_security=0, quarantined_security_unknown=0), cfg, cmp)

    monkeypatch.setattr(gates, "GATES", tuple(replace(g, check=valid_rows_only) if g.check is real else g
                                              for g in gates.GATES))
    bad = e2e_window(tmp_path / "planted", "jsonl", 3, 3, run)
    assert bad and all("PROMOTE with the security gate pass" in b for b in bad), bad
