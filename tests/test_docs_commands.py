"""Every ``$ tooldisc …`` line of README.md and docs/*.md runs as written (issue 27 item 7).

Each Markdown file's ``console`` blocks are read in order; a command (``\\``
continuations joined) whose first word is ``tooldisc`` is run in-process with typer's
CliRunner, in a temporary directory holding the files the examples name (the shipped
catalog as ``catalog.yaml``, small gold sets drawn from the shipped one, a traffic log,
canary exports…) and links to ``configs/``, ``discovery/`` and ``gold/``, so a line can
read a file an earlier line of the same page wrote. ``a ; b`` runs both; ``a | jq …``
runs the tooldisc part; ``$VAR`` is expanded; an unquoted glob is expanded as a shell
would.

A line passes when it exits 0 or with an exit code the command documents for a
result (1 for a failed check, 10 HOLD, 20 ROLLBACK) — never 2 (bad input or usage) and
never an uncaught exception. A line whose comment says ``no-run: REASON`` is skipped,
and the reason must be there; this file lists none by hand.

Time: most of a line's cost is re-validating the same 180-tool catalog file (every
tool's JSON Schema), so loading is memoised on the file's path and exact bytes: a
catalog file that did not change gives the very catalog it gave before, as a fresh
load would (catalogs are immutable); anything an earlier line wrote is loaded anew.
"""

from __future__ import annotations

import glob
import json
import re
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from tests.conftest import ROOT

DOCS = ("README.md", *sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md")))
NO_RUN = re.compile(r"#.*\bno-run:\s*(\S.*)$")
RESULT_CODES = {0, 1, 10, 20}  # success, a check that failed, canary HOLD / ROLLBACK


@dataclass(frozen=True)
class Line:
    doc: str
    number: int
    text: str  # the command as written, continuations joined
    no_run: str | None

    def __str__(self) -> str:
        return f"{self.doc}:{self.number}: {self.text}"


def console_lines(doc: str) -> list[Line]:
    """The ``$ tooldisc …`` commands of ``doc``'s console blocks, in order."""
    out: list[Line] = []
    lines = (ROOT / doc).read_text("utf-8").splitlines()
    in_console = False
    i = 0
    while i < len(lines):
        raw = lines[i]
        if raw.lstrip().startswith("```"):
            in_console = not in_console and raw.strip() == "```console"
            i += 1
            continue
        if in_console and raw.lstrip().startswith("$ tooldisc"):
            start = i + 1
            text = raw.strip()[2:]
            while text.rstrip().endswith("\\") and i + 1 < len(lines):
                i += 1
                text = text.rstrip()[:-1].rstrip() + " " + lines[i].strip()
            marker = NO_RUN.search(text)
            out.append(Line(doc, start, text, marker.group(1).strip() if marker else None))
        i += 1
    return out


def _commands(text: str, env: dict[str, str]) -> list[list[str]]:
    """``text`` as argument lists: ``;`` separates commands, a pipe's right side is dropped."""
    lexer = shlex.shlex(text, posix=True, punctuation_chars=";|")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    commands: list[list[str]] = [[]]
    piped = False
    for token in lexer:
        if token == ";":
            commands.append([])
            piped = False
        elif token == "|":
            piped = True
        elif not piped:
            commands[-1].append(token)
    out = []
    for cmd in commands:
        args = []
        for token in cmd:
            token = re.sub(r"\$\{?(\w+)\}?", lambda m: env[m.group(1)], token)
            quoted = f"'{token}'" in text or f'"{token}"' in text
            if any(c in token for c in "*?[") and not quoted:
                args += sorted(glob.glob(token, recursive=True)) or [token]
            else:
                args.append(token)
        if args:
            out.append(args)
    return out


def _shipped_gold() -> dict:
    return json.loads((ROOT / "gold" / "data" / "gold.json").read_text("utf-8"))


def _gold(base: dict, queries: list[dict]) -> str:
    return json.dumps({k: v for k, v in base.items() if k != "queries"} | {"queries": queries}, ensure_ascii=False)


def _traffic(queries: list[dict]) -> str:
    return "".join(json.dumps({"id": q["id"], "query": q["query"],
                               "relevant": [] if q.get("no_match") else q.get("primary_expected_tools", [])},
                              ensure_ascii=False) + "\n" for q in queries)


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every file the examples read and no earlier line writes, made once."""
    from tooldisc.cli.app import app
    from tooldisc.gold.loader import parse_gold
    from tooldisc.gold.trec import qrels_text, topics_text
    from tooldisc.reports.render import json_text

    d = tmp_path_factory.mktemp("docs-fixtures")
    for name in ("configs", "discovery", "gold"):
        (d / name).symlink_to(ROOT / name, target_is_directory=True)
    catalog = (ROOT / "gold" / "data" / "catalog.yaml").read_text("utf-8")
    for name in ("catalog.yaml", "my-catalog.yaml"):
        (d / name).write_text(catalog, encoding="utf-8")
    (d / "c.json").write_text(json.dumps(yaml.safe_load(catalog), ensure_ascii=False), encoding="utf-8")
    shipped = _shipped_gold()
    queries = shipped["queries"]
    matched = [q for q in queries if not q.get("no_match")]
    no_match = [q for q in queries if q.get("no_match")]
    sets = {"g.json": matched[:36] + no_match[:4], "gold.json": matched[36:72] + no_match[4:8],
            "held_out.json": matched[72:108] + no_match[8:12], "my-gold.json": matched[108:144] + no_match[12:16],
            "my-held-out.json": matched[144:180] + no_match[16:20]}
    for name, part in sets.items():
        (d / name).write_text(_gold(shipped, part), encoding="utf-8")
    (d / "traffic.jsonl").write_text(_traffic(matched[180:320] + no_match[20:30]), encoding="utf-8")
    g = parse_gold((d / "g.json").read_text("utf-8"))
    (d / "qrels.txt").write_text(qrels_text(g), encoding="utf-8")
    (d / "topics.tsv").write_text(topics_text(g), encoding="utf-8")
    (d / "ctx.yaml").write_text("tenant: acme\nroles: [accountant]\npermissions: [invoices.read, customers.read]\n"
                                "mode: supervised\n", encoding="utf-8")
    (d / "openai_tools.json").write_text(json.dumps([{"type": "function", "function": {
        "name": "list_orders", "description": "List the shop's orders",
        "parameters": {"type": "object", "properties": {"status": {"type": "string"}}}}}]), encoding="utf-8")
    (d / "mcp_tools.json").write_text(json.dumps({"tools": [
        {"name": "list_invoices", "description": "List invoices", "inputSchema": {"type": "object"},
         "annotations": {"readOnlyHint": True}},
        {"name": "delete_invoice", "description": "Delete an invoice", "inputSchema": {"type": "object"},
         "annotations": {"destructiveHint": True}}]}), encoding="utf-8")
    old = {"catalog_version": "1", "tools": [{"name": "list_invoices", "description": "List invoices",
                                              "side_effect": "none", "roles": ["accountant"]}]}
    (d / "old.yaml").write_text(yaml.safe_dump(old), encoding="utf-8")
    new = {"catalog_version": "2", "tools": [{**old["tools"][0], "roles": []}]}  # opened to every role
    (d / "new.yaml").write_text(yaml.safe_dump(new), encoding="utf-8")
    words = ["invoice", "customer", "stock", "payment", "report", "cheque"]
    (d / "tools.jsonl").write_text("".join(json.dumps({"name": f"{w}_tool", "description": f"Manage {w} records",
                                                       "parameters": None}) + "\n" for w in words), encoding="utf-8")
    (d / "queries.jsonl").write_text("".join(
        json.dumps({"id": f"q{i}", "query": f"show the {w} records", "relevant": [f"{w}_tool"],
                    "subset": "single" if i % 2 else "multi"}) + "\n" for i, w in enumerate(words * 4)),
        encoding="utf-8")
    (d / "mine.trec").write_text("".join(f"q{i} Q0 {w}_tool 1 0.9 mine\nq{i} Q0 {words[(j + 1) % 6]}_tool 2 0.5 mine\n"
                                         for i, (j, w) in enumerate(list(enumerate(words)) * 4)), encoding="utf-8")
    (d / "baseline.yaml").write_text("weights: {ngram: 0.0}\n", encoding="utf-8")
    (d / "candidate.yaml").write_text("k: 15\n", encoding="utf-8")
    (d / "tuned.yaml").write_text("weights: {ngram: 0.5}\n", encoding="utf-8")  # what the no-run tune line writes
    (d / "plan.json").write_text(json.dumps({"decision": "tools", "actions": [
        {"id": "a1", "tool": "search_customers", "arguments": {"query": "acme"}, "depends_on": []},
        {"id": "a2", "tool": "get_customer", "arguments": {"customer_id": "$from:a1.items.0.id"},
         "depends_on": ["a1"]}]}), encoding="utf-8")
    (d / "ids.csv").write_text("tenant_id,user_id\n" + "".join(f"t{i % 7},u{i}\n" for i in range(2000)),
                               encoding="utf-8")
    import tooldisc

    (d / "main.json").write_text(json_text(tooldisc.evaluate(None, None).document()), encoding="utf-8")
    runner = CliRunner()
    for args in (["canary", "synth", "--events", "4000", "--scenario", "healthy", "--percent", "10", "--out",
                  str(d / "exports" / "day=1" / "part-0.parquet")],
                 ["canary", "synth", "--profile", "shadow", "--scenario", "healthy", "--rows", "200", "--out",
                  str(d / "shadow" / "turns.jsonl")]):
        (d / Path(args[-1]).parent).mkdir(parents=True, exist_ok=True)
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
    return d


@pytest.mark.parametrize("doc", DOCS)
def test_console_lines_run_as_written(doc: str, fixtures: Path, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from tooldisc.cli.app import app
    from tooldisc.errors import ToolDiscError

    lines = console_lines(doc)
    work = tmp_path / "work"
    shutil.copytree(fixtures, work, symlinks=True)
    monkeypatch.chdir(work)
    _memoise_catalog_loading(monkeypatch)
    env = {"GITHUB_STEP_SUMMARY": str(work / "step-summary.md")}
    runner = CliRunner()
    for line in lines:
        if line.no_run is not None:
            continue
        for args in _commands(line.text, env):
            if args[0] != "tooldisc":
                continue
            result = runner.invoke(app, args[1:])
            exc = result.exception
            if exc is not None and not isinstance(exc, SystemExit):
                kind = "bad input (exit 2)" if isinstance(exc, ToolDiscError) else "an uncaught exception"
                pytest.fail(f"{line}\n-> {kind}: {type(exc).__name__}: {exc}")
            assert result.exit_code in RESULT_CODES, f"{line}\n-> exit {result.exit_code}\n{result.output[-2000:]}"


_CATALOGS: dict[tuple, object] = {}


def _memoise_catalog_loading(monkeypatch: pytest.MonkeyPatch) -> None:
    import hashlib

    from tooldisc.discovery.catalog import io as catalog_io

    real = catalog_io.load_catalog

    def load(path, **kwargs):  # type: ignore[no-untyped-def]
        try:
            digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
        except OSError:
            return real(path, **kwargs)
        key = (str(path), str(Path(path).resolve()), digest, tuple(sorted(kwargs.items())))
        if key not in _CATALOGS:
            _CATALOGS[key] = real(path, **kwargs)
        return _CATALOGS[key]

    monkeypatch.setattr(catalog_io, "load_catalog", load)


def test_the_console_lines_are_found_and_no_run_lines_give_a_reason() -> None:
    found = {doc: console_lines(doc) for doc in DOCS}
    assert len(found["README.md"]) >= 35 and len(found["docs/learning.md"]) >= 8
    skipped = [line for lines in found.values() for line in lines if line.no_run is not None]
    assert all(len(line.no_run) >= 10 for line in skipped), skipped
    ran = sum(1 for lines in found.values() for line in lines if line.no_run is None)
    assert ran > 4 * len(skipped)  # the marker is the exception
    assert _commands("tooldisc a 'x*y' ; tooldisc b $V | jq .x", {"V": "v"}) == [
        ["tooldisc", "a", "x*y"], ["tooldisc", "b", "v"]]
