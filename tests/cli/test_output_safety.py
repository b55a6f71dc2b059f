"""What the commands print and write: escaped text, one-format catalogs, file modes (issue 10).

Through the real command in a subprocess: items 1 (format detection keeps policy),
10 (the reserved name), 12 (escaped output), 16 (added tools in ``catalog diff``)
and 17 (file modes of ``--out``, ``--junit``, ``--run-out``).
"""

from __future__ import annotations

import json
import stat
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

from tests.cli.bad_corpus import Runner
from tests.conftest import ROOT

OK = str(ROOT / "tests" / "cli" / "data" / "ok_catalog.yaml")
RAW = ("\x1b", "\u202e", "\x9b")


Cli = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture(scope="module")
def run_cli(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cli]:
    """``tooldisc ARGS`` in a subprocess forked from one that imported the CLI once (the
    corpus runner, ~1 s saved per call); ``umask=`` runs it as ``umask N && tooldisc ARGS``."""
    runner = Runner()

    def run(*args: str, umask: int | None = None) -> subprocess.CompletedProcess[str]:
        scratch = tmp_path_factory.mktemp("run")
        result = runner.run(list(args), scratch, umask=umask)
        assert result.signal is None and not result.timed_out, result
        return subprocess.CompletedProcess(["tooldisc", *args], result.exit, result.stdout, result.stderr)

    yield run
    runner.close()


def _write(path: Path, doc: object) -> str:
    path.write_text(json.dumps(doc, ensure_ascii=False) if path.suffix == ".json" else yaml.safe_dump(doc),
                    encoding="utf-8")
    return str(path)


# --------------------------------------------------------------------------- item 1


def test_a_tooldisc_catalog_with_an_mcp_field_is_refused_not_read_as_mcp(run_cli: Cli, tmp_path: Path) -> None:
    """The issue's attack: a disabled, owner-only delete tool whose first keys look like MCP."""
    doc = {"tools": [{"name": "delete_invoice", "annotations": {"destructiveHint": True}, "side_effect": "delete",
                      "roles": ["owner"], "permissions": ["invoices.delete"], "tenant_required": True,
                      "enabled": False}]}
    path = _write(tmp_path / "catalog.json", doc)
    for args in (["discover", "delete invoice 5", "--catalog", path, "--role", "viewer", "--json"],
                 ["catalog", "validate", path],
                 ["catalog", "validate", path, "--catalog-format", "tooldisc"],
                 ["eval", "--catalog", path, "--catalog-format", "tooldisc", "--json"]):
        proc = run_cli(*args)
        assert proc.returncode == 2, proc.stdout
        assert proc.stdout == "" and len(proc.stderr.splitlines()) == 1
        assert "tools[0]" in proc.stderr and "a catalog is exactly one format" in proc.stderr
    mcp = run_cli("catalog", "validate", path, "--catalog-format", "mcp")
    assert mcp.returncode == 2 and "tooldisc field in a document read as MCP" in mcp.stderr


def test_an_imported_format_says_it_carries_no_policy(run_cli: Cli, tmp_path: Path) -> None:
    doc = {"tools": [{"name": "list_invoices", "description": "List invoices", "inputSchema": {"type": "object"},
                      "annotations": {"readOnlyHint": True}},
                     {"name": "wipe", "description": "Wipe", "inputSchema": {"type": "object"}}]}
    path = _write(tmp_path / "mcp.json", doc)
    proc = run_cli("discover", "list invoices", "--catalog", path, "--catalog-format", "mcp", "--role", "x", "--json")
    assert proc.returncode == 0, proc.stderr
    assert "mcp.json: MCP tools carry no policy (roles, permissions, tenant rules)" in proc.stderr
    assert [c["name"] for c in json.loads(proc.stdout)["candidates"]] == ["list_invoices"]  # wipe: never offered
    body = json.loads(run_cli("catalog", "validate", path, "--json").stdout)
    assert body["format"] == "mcp" and body["carries_policy"] is False and "carry no policy" in body["notes"][0]
    own = json.loads(run_cli("catalog", "validate", OK, "--json").stdout)
    assert own["carries_policy"] is True and own["notes"] == []


# --------------------------------------------------------------------------- item 10


def test_a_tool_named_search_tools_is_an_error_at_load(run_cli: Cli, tmp_path: Path) -> None:
    path = _write(tmp_path / "c.yaml", {"tools": [{"name": "search_tools", "side_effect": "none"}]})
    proc = run_cli("discover", "find", "--catalog", path, "--tenant", "t")
    assert proc.returncode == 2 and "the name 'search_tools' is reserved for tooldisc's meta-tool" in proc.stderr


# --------------------------------------------------------------------------- item 12


def test_untrusted_text_is_escaped_in_tables_lines_and_json(run_cli: Cli, tmp_path: Path) -> None:
    """An issue path carries the document's own key: ANSI and a bidi override in it (an unknown
    field, an error since issue 25's closed schemas)."""
    doc = {"tools": [{"name": "a", "side_effect": "none", "parameters": {"type": "object"},
                      "x\x1b[2J\u202eKO": 1}]}
    path = _write(tmp_path / "c.json", doc)
    table = run_cli("catalog", "validate", path)
    assert table.returncode == 1, table.stderr
    assert not any(c in table.stdout for c in RAW)
    assert "tools[0].x\\x1b[2J\\u202eKO: unknown field; known: " in table.stdout
    js = run_cli("catalog", "validate", path, "--json")
    assert not any(c in js.stdout for c in RAW)
    assert json.loads(js.stdout)["issues"][0]["path"] == "tools[0].x\x1b[2J\u202eKO"  # same value, escaped text


def test_a_file_name_with_control_characters_is_escaped_in_the_error_line(run_cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "cat\x1b[31m\nOK.yaml"
    path.write_text("tools: 5\n", encoding="utf-8")
    proc = run_cli("catalog", "stats", str(path))
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1
    assert "cat\\x1b[31m\\x0aOK.yaml: tools:" in proc.stderr and "\x1b" not in proc.stderr


def test_a_name_that_looks_like_rich_markup_prints_as_written(run_cli: Cli, tmp_path: Path) -> None:
    path = _write(tmp_path / "c.yaml", {"tools": [
        {"name": "[/]list_[bold]invoices", "description": "list invoices", "side_effect": "none"}]})
    proc = run_cli("discover", "list invoices", "--catalog", path, "--tenant", "t")
    assert proc.returncode == 0, proc.stderr
    assert "[/]list_[bold]invoices" in proc.stdout


# --------------------------------------------------------------------------- item 16


def test_catalog_diff_markdown_shows_names_as_text(run_cli: Cli, tmp_path: Path) -> None:
    doc = yaml.safe_load(Path(OK).read_text(encoding="utf-8"))
    doc["tools"].append({"name": "<svg onload=x>|[a](b)", "side_effect": "delete"})
    new = _write(tmp_path / "new.yaml", doc)
    md = run_cli("catalog", "diff", OK, new, "--format", "md")
    assert md.returncode == 1
    assert "| \\<svg onload=x>\\|\\[a\\](b) | side_effect | an added tool that is not read-only" in md.stdout
    assert md.stdout.count("<svg") == md.stdout.count("\\<svg") > 0  # only ever escaped


# --------------------------------------------------------------------------- item 17


def _mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


def test_out_junit_and_run_out_respect_the_umask_and_keep_an_existing_mode(run_cli: Cli, tmp_path: Path) -> None:
    gold = _write(tmp_path / "gold.json", {"queries": [
        {"id": "q1", "query": "list invoices", "primary_expected_tools": ["list_invoices"], "intent": "read"}]})
    measures = _write(tmp_path / "eval.json", {"metrics": {"hit@15": 1.0}})
    commands = {
        "out.json": ["catalog", "convert", OK, "--to", "openai", "--out", "{target}"],
        "gate.xml": ["gate", "--from", measures, "--min", "hit@15=0.5", "--junit", "{target}"],
        "run.trec": ["eval", "--catalog", OK, "--gold", gold, "--tenant", "t", "--k", "3", "--json",
                     "--run-out", "{target}"],
    }
    for name, args in commands.items():
        target = tmp_path / name
        argv = [a.replace("{target}", str(target)) for a in args]
        proc = run_cli(*argv, umask=0o022)
        assert proc.returncode == 0, proc.stderr
        assert _mode(target) == 0o644, name
        target.chmod(0o640)
        proc = run_cli(*argv, umask=0o077)
        assert proc.returncode == 0, proc.stderr
        assert _mode(target) == 0o640, name  # replaced, mode kept
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp file left


@pytest.mark.parametrize("umask", [0o027])
def test_a_new_file_under_a_strict_umask_is_not_world_readable(run_cli: Cli, tmp_path: Path, umask: int) -> None:
    target = tmp_path / "tools.json"
    proc = run_cli("catalog", "convert", OK, "--to", "mcp", "--out", str(target), umask=umask)
    assert proc.returncode == 0, proc.stderr
    assert _mode(target) == 0o640


def test_the_effective_context_line_is_escaped_whatever_prints_it() -> None:
    """Tenant, roles and permissions come from a context file: the line itself is escaped,
    not only the console that prints it today."""
    from tooldisc.cli.commands.discover import context_line
    from tooldisc.discovery.model import Context

    ctx = Context(tenant="t\x1b[31m\u202e", roles=frozenset({"ro\x1b]0;x\x07X", "[bold]y"}),
                  permissions=frozenset({"p\nOK"}), mode="autonomous", forced=frozenset({"d\u2066"}))
    line = context_line(ctx)
    assert line.isprintable() and "\n" not in line
    assert line == ("context: tenant 't\\x1b[31m\\u202e'; roles [bold]y, ro\\x1b]0;x\\x07X; permissions p\\x0aOK; "
                    "mode autonomous; forced d\\u2066")


HOSTILE = "[bold]x[/bold] [link=http://e]y[/link] \x1b[2J\u202e"
SHOWN = "[bold]x[/bold] [link=http://e]y[/link] \\x1b[2J\\u202e"


def test_plan_and_bench_tables_print_strings_as_written(capsys: pytest.CaptureFixture[str]) -> None:
    """Every stdout table goes through ``print_report`` (``reports.render``): no markup, every string escaped."""
    from tooldisc.cli.common import print_report

    finding = {"code": "unknown_tool", "action": HOSTILE, "where": "steps[0]", "message": HOSTILE}
    print_report({"valid": False, "findings": [finding], "checks": []}, "plan", "table")
    engine = {"available": False, "skipped": HOSTILE}
    own = {"build_s": {"median": 0.1}, "latency_ms": {"p50": 1.0, "p95": 2.0, "p99": 3.0}}
    print_report({"sizes": [{"n_tools": 10, "targets": {}, "ratios": {},
                             "engines": {"tooldisc": own, "rank_bm25": engine, "bm25s": engine}}],
                  "environment": {"cpu_count": 2, "python": HOSTILE, "versions": {}},
                  "config": {"queries": 1, "repeats": 1, "k": 5}}, "bench", "table")
    out = capsys.readouterr().out
    assert not any(c in out for c in RAW)
    assert out.count("[bold]x[/bold]") == 5 and "\\x1b[2J" in out and "[link=http://e]y[/link]" in out


# --------------------------------------------------------------------------- streams that are not UTF

PERSIAN_QUERY = "فاکتورهای پرداخت نشده"


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_a_stream_that_cannot_hold_every_character_gets_escapes_not_a_traceback(encoding: str) -> None:
    """A Latin-1 locale or ``PYTHONIOENCODING=ascii``: the em dash of a note or a Persian description stopped
    the command with a traceback. Now what the stream lacks is escaped, tables are boxed in ASCII, and JSON
    is written as ASCII: the same value a UTF-8 stream gets."""
    from tests.conftest import run_cli

    env = {"PYTHONIOENCODING": encoding}
    table = run_cli("discover", PERSIAN_QUERY, env=env)
    assert table.returncode == 0 and "Traceback" not in table.stderr, table.stderr
    assert table.stdout.isascii() and "+---" in table.stdout and "\\u2014" in table.stdout  # the context line's em dash
    query = PERSIAN_QUERY + " \U0001f9fe"  # past the BMP: a backslash escape of it would not be JSON
    as_json = run_cli("discover", query, "--json", env=env)
    utf8 = run_cli("discover", query, "--json", env={"PYTHONIOENCODING": "utf-8"})
    assert as_json.returncode == utf8.returncode == 0
    assert as_json.stdout.isascii() and json.loads(as_json.stdout) == json.loads(utf8.stdout)
    assert json.loads(utf8.stdout)["query"] == query and not utf8.stdout.isascii()  # UTF-8 kept where it can be
    report = run_cli("eval", "--k", "15", env=env)
    assert report.returncode in (0, 1) and "Traceback" not in report.stderr and report.stdout.isascii()


def test_which_streams_hold_unicode() -> None:
    import io

    from tooldisc.terminal import holds_unicode

    def stream(encoding: str | None) -> io.TextIOWrapper:
        return io.TextIOWrapper(io.BytesIO(), encoding=encoding)

    assert holds_unicode(stream("utf-8")) and holds_unicode(stream("UTF8")) and holds_unicode(stream("utf-16"))
    assert not holds_unicode(stream("ascii")) and not holds_unicode(stream("latin-1")) and not holds_unicode(stream("cp1252"))
    assert holds_unicode(io.StringIO())  # names no encoding: taken as UTF-8


# --------------------------------------------------------------------------- standard output that fails

def _tooldisc(*args: str, stdout: object) -> subprocess.CompletedProcess[str]:
    import sys

    return subprocess.run([sys.executable, "-m", "tooldisc.cli", *args], stdout=stdout, stderr=subprocess.PIPE,
                          text=True, timeout=120, check=False)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
@pytest.mark.parametrize("args", [("discover", "list unpaid invoices", "--json"), ("eval", "--k", "15"), ("cache", "status")])
def test_a_full_disk_under_stdout_is_one_line_not_a_traceback(args: tuple[str, ...]) -> None:
    """It was an OSError traceback (or, for output small enough to stay buffered, the interpreter's
    'Exception ignored' at exit with status 120)."""
    with open("/dev/full", "w", encoding="utf-8") as full:
        done = _tooldisc(*args, stdout=full)
    assert done.returncode == 2
    last = done.stderr.splitlines()[-1]
    assert last == "error: No space left on device" and "Traceback" not in done.stderr and "Exception" not in done.stderr


def test_a_closed_stdout_or_a_reader_gone_stops_quietly() -> None:
    import os
    import sys

    closed = subprocess.run(["/bin/sh", "-c", 'exec "$0" -m tooldisc.cli discover "list unpaid invoices" >&-',
                             sys.executable], capture_output=True, text=True, timeout=120, check=False)
    assert closed.returncode == 0 and closed.stderr == "", closed.stderr  # written to nowhere, as print would
    import importlib.util

    if importlib.util.find_spec("mcp") is not None:  # serve needs the mcp extra (the dev extra has it)
        no_input = subprocess.run(["/bin/sh", "-c", 'exec "$0" -m tooldisc.cli serve --allow-default-context <&-',
                                   sys.executable], capture_output=True, text=True, timeout=120, check=False)
        assert no_input.returncode == 0 and "Traceback" not in no_input.stderr, no_input.stderr  # a server, no client
    read, write = os.pipe()
    os.close(read)  # nobody reads
    try:
        gone = _tooldisc("discover", "list unpaid invoices", "--json", stdout=write)
    finally:
        os.close(write)
    assert gone.returncode == 1 and "Traceback" not in gone.stderr and "Exception" not in gone.stderr


def test_running_out_of_memory_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 100,000-tool file under `ulimit -v 450000` was a MemoryError traceback (measured); now one line, exit 2."""
    from tests.conftest import invoke_cli
    from tooldisc.discovery.catalog import io as catalog_io

    def exhausted(*args: object, **kwargs: object) -> None:
        raise MemoryError

    monkeypatch.setattr(catalog_io, "load_catalog", exhausted)
    done = invoke_cli("discover", "list unpaid invoices")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == "error: out of memory: the command needed more than this process may allocate\n"
