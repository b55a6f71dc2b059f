"""``tooldisc learn`` through the real command, and a learned file through ``discover`` and ``eval``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import invoke_cli, run_cli
from tests.evaluation.test_learn import TOOLS, _traffic


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("learn")
    catalog = d / "tools.jsonl"
    catalog.write_text("".join(json.dumps({"name": n, "description": desc}) + "\n" for n, (desc, _) in TOOLS.items()))
    traffic = d / "traffic.jsonl"
    traffic.write_text("".join(json.dumps({"id": f"r{i}", "query": e.query, "relevant": list(e.relevant)}) + "\n"
                               for i, e in enumerate(_traffic())))
    out = d / "learned.bin"  # any extension: recognised by content
    proc = invoke_cli("learn", "--catalog", str(catalog), "--from", str(traffic), "--out", str(out), "--folds", "3",
                      "--no-mutation")  # the table: every part's line is printed
    assert proc.returncode == 0, proc.stderr
    return {"catalog": catalog, "traffic": traffic, "learned": out, "table": proc.stdout,
            "report": json.loads(out.read_text())}


def test_learn_writes_a_verified_file_and_reports_each_part(files) -> None:
    report = files["report"]
    assert "expansions" in report["parts"]
    assert report["report"]["expansions"]["kept"] is True
    assert "mutation" not in report["report"]  # --no-mutation: not fitted, not reported
    table = files["table"]
    for part in ("expansions", "affinity", "ranker", "abstention"):
        assert f"  {part} " in table, table
    if "abstention" in report["parts"]:
        assert "no-match success" in table and "(without:" in table
    doc = json.loads(files["learned"].read_text())
    assert doc["format"] == "tooldisc-learned" and len(doc["sha256"]) == 64


def test_discover_with_the_learned_file_finds_what_traffic_taught(files) -> None:
    proc = invoke_cli("discover", "show receivables quickly", "--catalog", str(files["catalog"]), "--tenant", "t",
                   "--json", "--learned", str(files["learned"]))
    assert proc.returncode == 0, proc.stderr
    taught = json.loads(proc.stdout)
    assert taught["candidates"][0]["name"] == "list_invoices"  # "receivables" is in no description
    assert "expansion" in taught["candidates"][0]["features"]
    assert 0.0 <= taught["confidence"]["probability"] <= 1.0


def test_compare_without_and_with_the_learned_file(files) -> None:
    default = str(Path(__file__).resolve().parents[2] / "discovery" / "data" / "default.yaml")
    proc = invoke_cli("compare", default, default, "--catalog", str(files["catalog"]), "--gold", str(files["traffic"]),
                   "--k", "5", "--learned-b", str(files["learned"]), "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    mrr = next(m for m in doc["measures"] if m["measure"] == "MRR")
    assert mrr["b"] > mrr["a"] + 0.3  # in-sample: a wiring check, not a quality claim


def test_learned_arms_by_name_by_content_and_by_flag_agree(files) -> None:
    """``default default+L``, ``default L`` (a learned file is known by its content) and ``--learned-b L``
    alone (the docs' form: both arms default to the shipped config) are one comparison."""
    common = ["--catalog", str(files["catalog"]), "--gold", str(files["traffic"]), "--k", "5", "--json"]
    docs = []
    for args in (["default", f"default+{files['learned']}"], ["default", f"mine={files['learned']}"],
                 ["--learned-b", str(files["learned"])]):
        proc = invoke_cli("compare", *args, *common)
        assert proc.returncode == 0, proc.stderr
        docs.append(json.loads(proc.stdout))
    assert [a["name"] for a in docs[0]["arms"]] == ["default", "default+learned"]
    assert [a["name"] for a in docs[1]["arms"]] == ["default", "mine"]
    assert [a["name"] for a in docs[2]["arms"]] == ["default", "default+learned"]
    assert all(d["arms"][1]["learned"] and not d["arms"][0]["learned"] for d in docs)
    assert docs[0]["table"] == docs[1]["table"] == docs[2]["table"]


def test_a_request_naming_an_unknown_tool_is_bad_input(tmp_path: Path, files) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"id": "x", "query": "q", "relevant": ["no_such_tool"]}) + "\n")
    proc = run_cli("learn", "--catalog", str(files["catalog"]), "--from", str(bad), "--out", str(tmp_path / "o.json"))
    assert proc.returncode == 2
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and "no_such_tool" in errors[0] and str(bad) in errors[0]
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "o.json").exists()


def test_a_learned_file_for_another_catalog_warns_and_drops_stale_expansions(tmp_path: Path, files) -> None:
    other = tmp_path / "tools.jsonl"
    lines = files["catalog"].read_text().splitlines()
    other.write_text("\n".join([lines[0].replace("List sales invoices", "List all invoices"), *lines[1:]]) + "\n")
    proc = invoke_cli("discover", "show receivables", "--catalog", str(other), "--tenant", "t",
                   "--learned", str(files["learned"]), "--json")
    assert proc.returncode == 0
    assert "ignored as stale" in proc.stderr and "1 changed since learning" in proc.stderr


def test_one_request_repeated_with_a_number_or_an_email_changed_stores_nothing(tmp_path: Path, files) -> None:
    """k-anonymity counts requests distinct after scrubbing (issue 25 item 9): six copies of one
    request differing only in an order number, and six differing only in an e-mail address, are
    one request each, so none of their words reaches the learned file."""
    extra = [{"query": f"refund order {n} zanzibar flamingo", "relevant": ["list_invoices"]} for n in range(101, 107)]
    extra += [{"query": f"mail the quokka marmalade to {who}@example.com", "relevant": ["search_payments"]}
              for who in ("ann", "bob", "cyd", "dan", "eve", "fay")]
    traffic = tmp_path / "traffic.jsonl"
    traffic.write_text(files["traffic"].read_text() + "".join(
        json.dumps({"id": f"x{i}", **row}) + "\n" for i, row in enumerate(extra)))
    out = tmp_path / "learned.json"
    proc = invoke_cli("learn", "--catalog", str(files["catalog"]), "--from", str(traffic), "--out", str(out),
                   "--folds", "3", "--no-mutation", "--no-ranker", "--no-abstention", "--no-clauses")
    assert proc.returncode == 0, proc.stderr
    body = out.read_text()
    assert "receivables" in body  # expansions were learned and stored
    for word in ("zanzibar", "flamingo", "quokka", "marmalade", "refund"):
        assert word not in body, word
