"""`--profile interleaving`: known verdicts through the real commands, the schema version 3 rules
(a malformed team string quarantines its row), the preference's statistics, the next step."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from tests.conftest import run_cli
from tooldisc.canary.config import GateConfig, load_gates
from tooldisc.canary.events import EVENT_SCHEMA
from tooldisc.canary.interleaving import (
    NOT_WORSE,
    WORSE,
    InterleavingEvidence,
    judge_interleaving,
    preference_numbers,
)
from tooldisc.canary.synthetic.interleaving import INTERLEAVING_SCENARIOS, synthesize_interleaving
from tooldisc.canary.verdict import run_verdict
from tooldisc.cli.app import app
from tooldisc.errors import ConfigError

EXP = "ranking-v2"
runner = CliRunner()


def verdict(path: Path | str, **kw) -> dict:
    return run_verdict(EVENT_SCHEMA, EXP, events=str(path), profile_name="interleaving", **kw)[1]


def cli(*args: str):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def scenarios(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every scenario, 20,000 events at 50 % (enough for no_preference to PROMOTE)."""
    d = tmp_path_factory.mktemp("interleaving")
    out = {}
    for name in INTERLEAVING_SCENARIOS:
        out[name] = d / f"{name}.parquet"
        synthesize_interleaving(out[name], 20_000, name, seed=2)
    return out


@pytest.mark.parametrize("name", sorted(INTERLEAVING_SCENARIOS))
def test_every_scenario_gives_its_known_verdict_through_the_cli(scenarios: dict[str, Path], name: str) -> None:
    sc = INTERLEAVING_SCENARIOS[name]
    res = cli("canary", "verdict", "--profile", "interleaving", "--events", scenarios[name], "--experiment", EXP,
              "--format", "json")
    assert res.exit_code == {"PROMOTE": 0, "HOLD": 10, "ROLLBACK": 20}[sc.verdict], res.output
    d = json.loads(res.stdout)
    assert d["verdict"] == sc.verdict and d["profile"] == "interleaving"
    failed = [g["name"] for g in d["gates"] if g["status"] != "pass"]
    assert failed == ([sc.failing_gate] if sc.failing_gate else []), d["gates"]
    assert [g["name"] for g in d["gates"]] == ["data", "balance", "security", "preference", "kill_switch",
                                               "quarantine"]
    assert d["next_step"]["action"] == {"PROMOTE": "promote", "HOLD": "fix", "ROLLBACK": "rollback"}[sc.verdict]
    assert d["files"] == [{"path": f"{name}.parquet", "rows": 20_000}]


def test_the_real_command_synth_then_verdict_exit_codes(tmp_path: Path) -> None:
    out = tmp_path / "w.csv"
    res = run_cli("canary", "synth", "--profile", "interleaving", "--scenario", "b_worse", "--events", "6000",
                  "--out", str(out), "--json")
    assert res.returncode == 0, res.stderr
    meta = json.loads(res.stdout)
    assert (meta["expected_verdict"], meta["failing_gate"], meta["percent"]) == ("ROLLBACK", "preference", 50.0)
    res = run_cli("canary", "verdict", "--profile", "interleaving", "--events", str(out), "--experiment", EXP)
    assert res.returncode == 20, res.stderr
    assert res.stdout.startswith("Canary verdict (interleaving): ranking-v2\nROLLBACK\nWhy: B is shown worse than A")
    res = run_cli("canary", "verdict", "--profile", "interleaving", "--events", str(out), "--experiment", "nope")
    assert res.returncode == 2 and "no rows for experiment 'nope'" in res.stderr


def test_synth_is_byte_identical_and_its_rows_follow_the_json_schema(tmp_path: Path) -> None:
    import jsonschema

    from tooldisc.canary.events import load_json_schema

    a, b, c = (tmp_path / f"{n}.jsonl" for n in "abc")
    for path, seed in ((a, 4), (b, 4), (c, 5)):
        synthesize_interleaving(path, 3_000, "b_better", seed=seed)
    assert a.read_bytes() == b.read_bytes() != c.read_bytes()
    validator = jsonschema.Draft202012Validator(load_json_schema(EVENT_SCHEMA))
    rows = [json.loads(line) for line in a.read_text().splitlines()]
    assert not [r for r in rows if list(validator.iter_errors(r))]
    v3 = [r for r in rows if r["schema_version"] == 3]
    assert v3 and all(r["arm"] == "experiment" and len(r["teams"]) == r["final_tool_count"] for r in v3)
    assert all(r["teams"] is None and r["credit"] is None for r in rows if r["schema_version"] == 2)
    assert {r["credit"] for r in v3} >= {None, "B", "A", "BAB", "-"}
    solo = [r for r in v3 if not r["contested"]]
    assert solo and all(set(r["teams"]) == {"A"} and r["credit"] in (None, "A") for r in solo)


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_text_formats_and_the_database_give_the_same_verdict(scenarios: dict[str, Path], tmp_path: Path,
                                                             fmt: str) -> None:
    from tooldisc.canary.duckdb.ingest import ingest

    src = tmp_path / f"u.{fmt}"
    synthesize_interleaving(src, 20_000, "unbalanced", seed=2)
    a, b = verdict(scenarios["unbalanced"]), verdict(src)
    assert a.pop("files") != b.pop("files")
    assert a == b
    db = tmp_path / "u.duckdb"
    ingest(str(db), str(src), EVENT_SCHEMA)
    c = run_verdict(EVENT_SCHEMA, EXP, db=str(db), profile_name="interleaving")[1]
    c.pop("files")
    assert c == b


def test_every_report_format_renders(scenarios: dict[str, Path], tmp_path: Path) -> None:
    for fmt, marker in (("md", "# Canary verdict (interleaving): ranking-v2"), ("html", "<svg"),
                        ("table", "Next: Stop interleaving (0 %) and keep A")):
        res = cli("canary", "verdict", "--profile", "interleaving", "--events", scenarios["b_worse"],
                  "--experiment", EXP, "--format", fmt)
        assert res.exit_code == 20 and marker in res.stdout, (fmt, res.stdout[:400])
    summary = tmp_path / "summary.md"
    res = cli("canary", "verdict", "--profile", "interleaving", "--events", scenarios["no_preference"],
              "--experiment", EXP, "--summary", summary, "--format", "json")
    assert res.exit_code == 0
    text = summary.read_text()
    assert text.startswith("## Canary PROMOTE: ranking-v2 (interleaving)") and "B is eligible to replace A" in text


def test_the_ab_profile_reads_interleaved_rows_as_requests(scenarios: dict[str, Path]) -> None:
    """A v3 row is a valid event for the A/B profile too (nothing quarantined)."""
    d = run_verdict(EVENT_SCHEMA, EXP, events=str(scenarios["b_better"]))[1]
    assert d["profile"] == "canary" and d["quarantined"] == 0
    assert sum(a["requests"] for a in d["arms"].values()) == 20_000


# -- schema version 3: what quarantines a row --------------------------------------------------

GOOD = {"schema_version": 3, "ts": "2025-01-01T00:00:00Z", "experiment": EXP, "percent": 50, "arm": "experiment",
        "bucket": 7, "channel": "mcp", "mode": "autonomous", "mutation": "READ", "candidate_count": 9,
        "final_tool_count": 4, "k": 4, "index_hit": False, "fallback": False, "fallback_reason": None,
        "discovery_miss": False, "schema_miss": False, "retrieval_miss": False, "authorization_failure": False,
        "unauthorized_candidate": False, "tenant_leak": False, "permission_violation": False,
        "tool_execution_success": None, "task_success": None, "latency_ms": 3.5, "schema_tokens": 400,
        "kill_switch": False, "event_id": "6b1e8c52-3f0a-4c1b-9d7e-2a5f4e3d2c1b", "teams": "ABBA", "credit": "B-",
        "contested": True}
BAD = [
    ({"teams": "ABXA"}, "teams: must be at most 1000 letters, each one of A, B"),
    ({"teams": "abba"}, "teams: must be at most 1000 letters, each one of A, B"),
    ({"teams": "AB"}, "teams: one letter per offered tool (final_tool_count)"),
    ({"teams": None}, "teams: required when schema_version is 3 and a tool was offered"),
    ({"teams": ["A", "B", "B", "A"]}, "teams: not a string of team letters"),
    ({"credit": "BC"}, "credit: must be at most 1000 letters, each one of A, B, -"),
    ({"credit": 1}, "credit: not a string of team letters"),
    ({"arm": "control"}, "arm: must be experiment when schema_version is 3 (an interleaved request)"),
    ({"event_id": None}, "event_id: required when schema_version is 3"),
    ({"schema_version": 2}, "teams: only in schema_version 3 (an interleaved request)"),
    ({"schema_version": 2, "teams": None}, "credit: only in schema_version 3 (an interleaved request)"),
    ({"schema_version": 2, "teams": None, "credit": None}, "contested: only in schema_version 3 (an interleaved request)"),
    ({"contested": None}, "contested: required when schema_version is 3"),
    ({"contested": "yes"}, "contested: not a valid bool"),
    ({"teams": "AAAA"}, "credit: credits a team that placed no offered tool"),
    ({"teams": None, "final_tool_count": 0, "credit": "A", "contested": False},
     "credit: credits a team that placed no offered tool"),
    ({"teams": None, "final_tool_count": 0, "credit": None}, "contested: true needs an offered tool"),
    ({"teams": "A" * 1001, "final_tool_count": 1001}, "teams: must be at most 1000 letters, each one of A, B"),
]


def _reasons(path: Path) -> dict:
    from tooldisc.canary.duckdb.engine import DuckDBEngine

    engine = DuckDBEngine.from_events(str(path), EVENT_SCHEMA)
    try:
        return dict(engine.con.execute("SELECT _reason, count(*) FROM rows_all GROUP BY ALL").fetchall())
    finally:
        engine.close()


@pytest.mark.parametrize(("change", "reason"), BAD, ids=[r for _, r in BAD])
def test_a_malformed_interleaved_row_is_quarantined_with_its_reason(tmp_path: Path, change: dict,
                                                                      reason: str) -> None:
    f = tmp_path / "e.jsonl"
    bad = {**GOOD, **change, "event_id": change.get("event_id", "7c2f9d63-4a1b-4d2c-8e8f-3b6a5f4e3d2c")}
    f.write_text(json.dumps(GOOD) + "\n" + json.dumps(bad) + "\n")
    assert _reasons(f) == {None: 1, reason: 1}


def test_empty_and_null_mean_no_position_and_no_call_in_every_format(tmp_path: Path) -> None:
    """An empty offer (teams "" or null with final_tool_count 0) and no call (credit "" or null)
    are valid; CSV writes both as an empty field; Parquet reads like JSONL."""
    empty = {**GOOD, "final_tool_count": 0, "k": 15, "teams": "", "credit": "", "contested": False}
    nulls = {**GOOD, "final_tool_count": 0, "event_id": "7c2f9d63-4a1b-4d2c-8e8f-3b6a5f4e3d2c", "teams": None,
             "credit": None, "contested": False}
    rows = [GOOD, empty, nulls]
    (tmp_path / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    table = pa.Table.from_pylist([{**r, "ts": r["ts"]} for r in rows])
    pq.write_table(table, tmp_path / "b.parquet")
    import csv

    with (tmp_path / "c.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(GOOD))
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if v is None else str(v).lower() if isinstance(v, bool) else v) for k, v in r.items()})
    for name in ("a.jsonl", "b.parquet", "c.csv"):
        assert _reasons(tmp_path / name) == {None: 3}, name
    # typed as a number in Parquet: no team string reads from it
    pq.write_table(table.set_column(table.schema.get_field_index("teams"), "teams", pa.array([1, None, None])),
                   tmp_path / "d.parquet")
    assert _reasons(tmp_path / "d.parquet") == {"teams: not a string of team letters": 1, None: 2}


def test_a_quarantined_row_that_reports_a_leak_rolls_back(scenarios: dict[str, Path], tmp_path: Path) -> None:
    table = pq.read_table(scenarios["no_preference"])
    f = tmp_path / "leak.jsonl"
    f.write_text(json.dumps({**GOOD, "teams": "ABXA", "tenant_leak": True}) + "\n")
    pq.write_table(table, tmp_path / "good.parquet")
    d = verdict(f)
    assert d["verdict"] == "ROLLBACK" and d["next_step"]["gate"] == "security"


# -- the preference's statistics -----------------------------------------------------------------

def evidence(wins_b: int, wins_a: int, ties: int = 0, **kw) -> InterleavingEvidence:
    n = wins_a + wins_b + ties
    base = {"experiment": EXP, "since": None, "until": None, "requests": {"experiment": n}, "interleaved": n,
            "wins_a": wins_a, "wins_b": wins_b, "first_a": n // 2, "first_b": n - n // 2, "positions": 15 * n,
            "flags": {"unauthorized_candidate": 0, "tenant_leak": 0, "permission_violation": 0, "kill_switch": 0},
            "quarantined": 0, "quarantined_security": 0, "quarantined_security_unknown": 0,
            "percents": (10.0,), "current_percent": 10.0, "span_hours": 10.0}
    return InterleavingEvidence(**{**base, **kw})


def test_equal_wins_need_thousands_then_promote_and_the_wait_is_consistent() -> None:
    cfg = GateConfig()
    outcome, _, nums = preference_numbers(evidence(500, 500, 300), cfg)
    assert outcome == "inconclusive"
    need = nums["needed"]
    assert need["to_show"] == NOT_WORSE and need["requests"] > 0
    assert need["hours"] == pytest.approx(need["requests"] / 130, rel=1e-3)  # 1,300 requests in 10 h
    assert need["next_step"]["percent"] == 25 and need["next_step"]["hours"] < need["hours"]
    # the same rates over the requests it names: shown not worse (the wait is for 80% power)
    scale = (1300 + need["requests"]) / 1300
    grown = evidence(math.ceil(500 * scale), math.ceil(500 * scale), math.ceil(300 * scale))
    assert preference_numbers(grown, cfg)[0] == NOT_WORSE
    assert preference_numbers(evidence(4_000, 4_000), cfg)[0] == NOT_WORSE


def test_a_clear_loss_is_worse_and_a_small_one_waits_to_show_it() -> None:
    cfg = GateConfig()
    outcome, reason, nums = preference_numbers(evidence(400, 600), cfg)
    assert outcome == WORSE and "B shown worse than A" in reason and nums["worse_p_value"] <= 0.01
    iv = nums["interval"]
    assert iv["low"] < iv["estimate"] < iv["high"] < 0 and iv["limit"] == -0.05
    outcome, _, nums = preference_numbers(evidence(450, 550), cfg)  # -0.10: beyond the margin, not yet shown
    assert outcome == "inconclusive" and nums["needed"]["to_show"] == WORSE


def test_the_always_valid_p_value_needs_more_than_a_fixed_horizon_z() -> None:
    """At 2,000 decisive requests a 54/46 split is a fixed-horizon z of about 3.6 (p 0.0002),
    but looked at repeatedly it must clear the mixture boundary: larger p, same direction."""
    from tooldisc.canary.interleaving import Preference
    from tooldisc.canary.sequential import FixedHorizon, Mixture

    fixed = Preference(920, 1080, FixedHorizon())
    valid = Preference(920, 1080, Mixture.tuned(1_000, 0.05))
    assert fixed.worse_p_value() < 0.001 < valid.worse_p_value() < 0.05
    from statsmodels.stats.proportion import proportions_ztest

    _z, p = proportions_ztest(921, 2002, value=0.5, alternative="smaller", prop_var=921 / 2002)
    assert fixed.worse_p_value() == pytest.approx(p, rel=1e-6)


def test_gates_balance_data_and_judge() -> None:
    cfg = GateConfig()
    v = judge_interleaving(evidence(300, 290, 100), EXP, cfg)
    assert v.verdict == "HOLD" and v.next_step["action"] == "wait" and v.next_step["gate"] == "preference"
    v = judge_interleaving(evidence(100, 100, 50), EXP, cfg)
    assert [g.name for g in v.gates if g.status != "pass"] == ["data", "preference"]
    assert v.next_step["gate"] == "data" and v.next_step["wait"]["requests"] == 250
    v = judge_interleaving(evidence(4_000, 4_000, first_a=4_400, first_b=3_600), EXP, cfg)
    assert v.verdict == "HOLD" and v.next_step == {"action": "fix", "percent": 10, "gate": "balance", "metric": None,
                                                   "still_needed": []}
    v = judge_interleaving(evidence(4_000, 4_000), EXP, cfg)
    assert (v.verdict, v.next_percent, v.next_step["action"]) == ("PROMOTE", None, "promote")
    v = judge_interleaving(evidence(0, 0), EXP, cfg)
    assert v.verdict == "HOLD" and v.next_step["action"] == "fix"  # no interleaved request at all


def test_gates_yaml_interleaving_section(tmp_path: Path) -> None:
    f = tmp_path / "g.yaml"
    f.write_text("interleaving: {margin: 0.1, min_requests: 50, x-note: ignored}\n")
    cfg = load_gates(f)
    assert (cfg.interleaving.margin, cfg.interleaving.min_requests) == (0.1, 50)
    f.write_text("interleaving: {margni: 0.1}\n")
    with pytest.raises(ConfigError, match="did you mean 'margin'"):
        load_gates(f)
    f.write_text("interleaving: {margin: 1.5}\n")
    with pytest.raises(ConfigError, match=r"interleaving\.margin: The 'interleaving\.margin' parameter must be a number in the range \(0, 1\)"):
        load_gates(f)
