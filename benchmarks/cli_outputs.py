"""Record or compare what the ``tooldisc`` command prints, byte for byte, on a fixed list of invocations.

Why: a refactor of the command line (issue 26's thin CLI) must not change a byte of
what a user sees. This runs a fixed list of invocations — every command and format on
the shipped data, help pages, some bad inputs — through a given virtual environment's
``tooldisc``, stores stdout, stderr and the exit code of each (temporary paths, the
repository, the home folder and, where a command prints timings, every number scrubbed)
and compares two such records::

    python benchmarks/cli_outputs.py record --venv /work/main/.venv --out before.json
    python benchmarks/cli_outputs.py record --venv .venv --out after.json
    python benchmarks/cli_outputs.py compare before.json after.json

``compare`` prints every differing invocation (a unified diff of the differing stream)
and exits 1 when there is one. Output that differs only in where lines wrap is listed but
not counted: the two trees' paths differ in length, and rich wraps before the paths are scrubbed.

``hostile`` runs the same calls with standard output that fails (a stream that is not UTF, a full
disk, a closed stream) and exits 1 when any of them printed a traceback: each must end in output,
escapes or one error line::

    python benchmarks/cli_outputs.py hostile --venv .venv
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

PLAN = {"decision": "tools", "actions": [
    {"id": "a1", "tool": "orders.detail", "arguments": {"order_id": {"$from": "a2", "path": "items.0.nope"}},
     "depends_on": ["a2"]},
    {"id": "a2", "tool": "orders.list", "arguments": {"customer_id": "$from:a9.x", "bad": {"$from": 3}}},
    {"id": "a4", "tool": "ghost", "arguments": {}},
]}
GOOD_PLAN = {"decision": "tools", "actions": [
    {"id": "a1", "tool": "customers.search", "arguments": {"query": "Riccardo Lorini"}, "depends_on": []}]}
CONTEXT = "tenant: acme\nroles: [accountant]\npermissions: [invoices.read, customers.read]\nmode: supervised\n"


@dataclass(frozen=True)
class Call:
    """One invocation; ``numbers``: the output carries timings, so every digit run is scrubbed."""

    args: tuple[str, ...]
    numbers: bool = False


def _c(line: str, numbers: bool = False) -> Call:
    import shlex

    return Call(tuple(shlex.split(line)), numbers)


def calls() -> list[Call]:
    """The fixed list, in order (later calls read files earlier ones wrote into the run's folder)."""
    scen = "{repo}/agent/data/scenarios/catalog.yaml"
    devops = "{repo}/gold/data/devops"
    lines: list[str | Call] = [
        "--help", "--version", "", "nosuchcommand",
    ]
    helps = ["discover", "eval", "sweep", "compare", "fuse", "gate", "tune", "learn", "bench", "serve", "catalog",
             "catalog validate", "catalog stats", "catalog convert", "catalog diff", "gold", "gold validate",
             "gold stats", "gold split", "gold qrels", "kernels", "kernels status", "kernels build", "cache",
             "cache status", "cache clear", "canary", "canary assign", "canary simulate", "canary synth",
             "canary ingest", "canary verdict", "plan", "plan validate"]
    lines += [f"{h} --help" for h in helps]
    lines += [
        # discover
        "discover 'unpaid invoices this month'",
        "discover 'unpaid invoices this month' --json",
        "discover 'unpaid invoices this month' --format json --k 5",
        "discover 'restart the web server' --k auto",
        "discover 'restart the web server' --context-file ctx.yaml",
        "discover 'list invoices' --tenant acme --role accountant --permission invoices.read --mode supervised",
        "discover 'cancel the order' --explain orders.cancel",
        "discover 'cancel the order' --history 'show my orders' --json",
        "discover 'deploy' --catalog " + f"{devops}/catalog.yaml --json",
        "discover 'x' --format md",
        "discover 'x' --k 0",
        "discover 'x' --k many",
        "discover 'x' --catalog missing.yaml",
        "discover 'x' --catalog-format nosuch",
        # eval / sweep
        "eval", "eval --json", "eval --format md", "eval --format html", "eval --k 5 --json --misses 3",
        "eval --k auto --json", "eval --by category --json", "eval --schemas --json",
        "eval --out eval.json", "eval --out eval.md", "eval --out eval.txt", "eval --format xml",
        f"eval --gold {devops}/gold.json --catalog {devops}/catalog.yaml --json",
        "eval --run-out run.trec --per-query-out pq.jsonl --json --misses 0",
        "eval --run-tag 'a b'", "eval --by 'no such'",
        "sweep", "sweep --json", "sweep --format md", "sweep --k 1,3 --format html", "sweep --k 0,x",
        # compare / fuse
        "compare --run run.trec --run B=run.trec", "compare --run run.trec --run B=run.trec --json",
        "compare --run run.trec --run B=run.trec --format md",
        "compare --run run.trec --run B=run.trec --format html",
        "fuse run.trec run.trec --out fused.trec", "fuse run.trec run.trec --out fused2.trec --json",
        "fuse run.trec run.trec --out fused3.trec --method combmnz --format md",
        # gate
        "gate --min recall@5=0.1", "gate --min recall@5=0.1 --json", "gate --min recall@5=0.99 --format md",
        "gate --min recall@5=0.1 --format html", "gate --from eval.json --min recall@15=0.1",
        "gate --from eval.json --min recall@5=0.1", "gate --from eval.json --min recall@15=0.1 --k 5",
        "gate --from eval.json --max-drop recall@15=0.01 --baseline eval.json --json",
        "gate --max-drop recall@15=0.01 --baseline eval.json --min MRR=0.2",
        "gate --max-drop recall@15=0.01 --baseline eval.json --k 5", "gate --max-drop recall@5=0.01",
        "gate --from eval.json --max MRR=0.1 --junit junit.xml --summary summary.md --out gate.md",
        "gate --min recall@20=0.1 --k 15", "gate --min recall@5=0.1 --mode analyzer --role accountant --json",
        "gate --min hit@5=0.5 --out gate.json",
        "gate --min nosuch=1", "gate",
        # tune / learn / bench (timings)
        "tune --folds 2 --n-iter 1 --json", "tune --folds 2 --n-iter 1",
        "tune --folds 2 --n-iter 1 --format md",
        "learn --from {repo}/gold/data/gold.json --out learned.json --folds 2",
        "learn --from {repo}/gold/data/gold.json --out learned2.json --folds 2 --json --no-ranker",
        "eval --learned learned.json --json --misses 2", "learn --from {repo}/gold/data/gold.json --format md",
        Call(("bench", "--tools", "200", "--queries", "10", "--repeats", "1", "--no-baselines"), True),
        Call(("bench", "--tools", "200", "--queries", "10", "--repeats", "1", "--no-baselines", "--json"), True),
        Call(("bench", "--tools", "200", "--queries", "10", "--repeats", "1", "--no-baselines", "--format", "md"), True),
        "canary synth --events 10 --format md",  # a kind with no report builder: md stays a usage error
        # catalog
        "catalog validate {repo}/gold/data/catalog.yaml", "catalog validate {repo}/gold/data/catalog.yaml --json",
        "catalog stats {repo}/gold/data/catalog.yaml", "catalog stats {repo}/gold/data/catalog.yaml --json",
        f"catalog stats {scen}",
        "catalog convert {repo}/gold/data/catalog.yaml --to openai --out openai.json",
        "catalog convert {repo}/gold/data/catalog.yaml --to anthropic --out anthropic.json --json",
        "catalog convert {repo}/gold/data/catalog.yaml --to mcp --out mcp.json --compact",
        "catalog convert openai.json --to tooldisc --out back.yaml --side-effect none",
        "catalog validate openai.json", "catalog stats openai.json --from openai --json",
        f"catalog diff {{repo}}/gold/data/catalog.yaml {scen}",
        f"catalog diff {{repo}}/gold/data/catalog.yaml {scen} --json",
        f"catalog diff {{repo}}/gold/data/catalog.yaml {scen} --format md",
        f"catalog diff {{repo}}/gold/data/catalog.yaml {scen} --format html",
        "catalog diff {repo}/gold/data/catalog.yaml {repo}/gold/data/catalog.yaml",
        "catalog validate missing.yaml", "catalog stats {repo}/gold/data/catalog.yaml --format md",
        # gold
        "gold validate {repo}/gold/data/gold.json", "gold validate {repo}/gold/data/gold.json --json",
        "gold stats {repo}/gold/data/gold.json", "gold stats {repo}/gold/data/gold.json --json",
        "gold split {repo}/gold/data/gold.json --out-dir split", "gold split {repo}/gold/data/gold.json "
        "--out-dir split2 --json --test-fraction 0.3",
        "gold qrels {repo}/gold/data/gold.json --out -", "gold qrels {repo}/gold/data/gold.json --out q.txt "
        "--topics-out t.tsv --json",
        "eval --qrels q.txt --topics t.tsv --json",
        "gold stats {repo}/gold/data/gold.json --format md",
        # plan
        f"plan validate plan.json --catalog {scen}", f"plan validate plan.json --catalog {scen} --json",
        f"plan validate good.json --catalog {scen} --routed customers.search",
        f"plan validate plan.json --catalog {scen} --format md",
        # canary
        "canary assign --salt s --percent 10 --tenant t --user u",
        "canary assign --salt s --percent 10 --tenant t --user u --json",
        "canary simulate --salt s --percent 10 --ids 2000", "canary simulate --salt s --percent 10 --ids 2000 --json",
        "canary simulate --salt s --percent 10 --ids 2000 --salt2 s2 --percent2 50 --json",
        "canary synth --events 2000 --scenario healthy --out ev.jsonl",
        "canary synth --events 2000 --scenario srm --out srm.jsonl --json",
        "canary synth --rows 500 --profile shadow --scenario healthy --out shadow.jsonl --json",
        "canary synth --events 3000 --profile interleaving --scenario b_better --out il.jsonl --json",
        "canary synth --events 2000 --scenario healthy --out ev.csv --format md",
        "canary ingest ev.jsonl --db c.duckdb", "canary ingest srm.jsonl --db c.duckdb --json",
        "canary verdict --events ev.jsonl --experiment indexed-retrieval-v1",
        "canary verdict --events ev.jsonl --experiment indexed-retrieval-v1 --json",
        "canary verdict --events ev.jsonl --experiment indexed-retrieval-v1 --format md",
        "canary verdict --events ev.jsonl --experiment indexed-retrieval-v1 --format html",
        "canary verdict --events srm.jsonl --experiment indexed-retrieval-v1 --json --summary vsum.md",
        "canary verdict --db c.duckdb --experiment indexed-retrieval-v1 --out verdict.md --format md",
        "canary verdict --events il.jsonl --profile interleaving --experiment indexed-retrieval-v1",
        "canary verdict --events il.jsonl --profile interleaving --experiment indexed-retrieval-v1 --json",
        "canary verdict --events shadow.jsonl --profile shadow --experiment indexed-retrieval-v1 --json",
        "canary verdict --events ev.jsonl --experiment indexed-retrieval-v1 --out v.txt",
        "canary assign --salt s --percent 200 --tenant t --user u",
        # kernels / cache
        "kernels status --json", "kernels status", "cache status --json", "cache clear --json", "cache status",
        # files written earlier
        Call(("sh", "-c", "for f in eval.md gate.md junit.xml summary.md vsum.md verdict.md run.trec fused.trec "
              "fused3.trec back.yaml q.txt t.tsv split/*; do echo \"== $f\"; cat $f; done")),
    ]
    return [x if isinstance(x, Call) else _c(x) for x in lines]


def _scrub(text: str, tmp: str, numbers: bool) -> str:
    text = text.replace(os.path.realpath(tmp), "<TMP>").replace(tmp, "<TMP>").replace(str(REPO), "<REPO>")
    text = text.replace(str(Path.home()), "<HOME>")
    text = re.sub(r"/work/[A-Za-z0-9_.-]+", "<REPO>", text)  # another worktree's path (record vs compare)
    text = re.sub(r"_tooldisc_kernels_[0-9a-f]+", "_tooldisc_kernels_<KEY>", text)
    return _shape(text) if numbers else text


def _shape(text: str) -> str:
    """Timings and memory: only the shape is compared (column widths follow the numbers; bench names the
    commit it ran on)."""
    text = re.sub(r'("commit": )"[0-9a-fN]+"', r'\1"<SHA>"', text)
    text = re.sub(r'("dirty": )(true|false)', r"\1<DIRTY>", text)
    text = re.sub(r"commit [0-9a-fN]+( \(dirty\))?", "commit <SHA>", text)
    text = re.sub(r"\d+", "N", text)
    text = re.sub(r" +", " ", text)
    return re.sub(r"([─━┈-╿])\1+", r"\1", text)


def _words(text: object) -> list[str]:
    return str(text).split()


def _folder(tmp: str) -> dict[str, str]:
    """The run's folder filled with the files the calls read; the environment they run in."""
    Path(tmp, "plan.json").write_text(json.dumps(PLAN))
    Path(tmp, "good.json").write_text(json.dumps(GOOD_PLAN))
    Path(tmp, "ctx.yaml").write_text(CONTEXT)
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", tmp),
            "TOOLDISC_CACHE_DIR": str(Path(tmp, "cache")), "COLUMNS": "120", "LC_ALL": "C.UTF-8",
            "TERM": "dumb", "NO_COLOR": "1", "PYTHONHASHSEED": "0"}


def _command(call: Call, exe: str, repo: Path) -> list[str]:
    args = [a.replace("{repo}", str(repo)) for a in call.args]
    return args if args and args[0] == "sh" else [exe, *args]


def record(venv: Path, repo: Path) -> dict[str, dict[str, object]]:
    """Run every call in one fresh folder with one fresh cache; the scrubbed results by call."""
    exe = str(venv / "bin" / "tooldisc")
    results: dict[str, dict[str, object]] = {}
    with tempfile.TemporaryDirectory(prefix="cli-outputs-") as tmp:
        env = _folder(tmp)
        for call in calls():
            cmd = _command(call, exe, repo)
            proc = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, timeout=600, stdin=subprocess.DEVNULL)
            key = " ".join(call.args)
            results[key] = {"code": proc.returncode,
                            "stdout": _scrub(proc.stdout.decode("utf-8", "replace"), tmp, call.numbers),
                            "stderr": _scrub(proc.stderr.decode("utf-8", "replace"), tmp, call.numbers)}
            print(f"{proc.returncode:>3}  {key}", file=sys.stderr)
    return results


# Standard output that fails, by name: extra environment, and what stdout is ("full": /dev/full; "closed": none)
HOSTILE: dict[str, tuple[dict[str, str], str]] = {
    "ascii": ({"PYTHONIOENCODING": "ascii"}, "pipe"),
    "latin-1": ({"PYTHONIOENCODING": "latin-1"}, "pipe"),
    "full": ({}, "full"),
    "closed": ({}, "closed"),
}


def hostile(venv: Path, repo: Path, limit: int | None = None) -> list[str]:
    """Every call (the first ``limit``) under each of :data:`HOSTILE`; one line for each that printed a traceback."""
    exe = str(venv / "bin" / "tooldisc")
    found: list[str] = []
    for name, (extra, stdout) in HOSTILE.items():
        with tempfile.TemporaryDirectory(prefix="cli-hostile-") as tmp:
            env = {**_folder(tmp), **extra}
            for call in calls()[:limit]:
                cmd = _command(call, exe, repo)
                if stdout == "closed":
                    cmd = ["/bin/sh", "-c", 'exec "$@" >&-', "sh", *cmd]
                with open("/dev/full" if stdout == "full" else os.devnull, "w", encoding="utf-8") as sink:
                    proc = subprocess.run(cmd, cwd=tmp, env=env, stdout=subprocess.PIPE if stdout == "pipe" else sink,
                                          stderr=subprocess.PIPE, timeout=600, stdin=subprocess.DEVNULL)
                err = proc.stderr.decode("utf-8", "replace")
                if "Traceback" in err or "Exception ignored" in err:
                    found.append(f"{name}: {' '.join(call.args)}: {err.strip().splitlines()[-1]}")
            print(f"{name}: {len(calls()[:limit])} calls", file=sys.stderr)
    return found


def compare(before: dict[str, dict[str, object]], after: dict[str, dict[str, object]]) -> int:
    """Print every difference; the number of differing calls."""
    differ = wrapped = 0
    shaped = {" ".join(c.args) for c in calls() if c.numbers}
    for key in shaped & set(before) & set(after):
        for doc in (before[key], after[key]):
            doc["stdout"], doc["stderr"] = _shape(str(doc["stdout"])), _shape(str(doc["stderr"]))
    for key in sorted(set(before) | set(after)):
        a, b = before.get(key), after.get(key)
        if a == b:
            continue
        if a is not None and b is not None and a["code"] == b["code"] and all(
                _words(a[part]) == _words(b[part]) for part in ("stdout", "stderr")):
            wrapped += 1  # the same words, wrapped elsewhere: a scrubbed path of another length
            print(f"### {key}: the same words, wrapped at other places (a path of another length)")
            continue
        differ += 1
        print(f"### {key}")
        if a is None or b is None:
            print("    only in", "after" if a is None else "before")
            continue
        for part in ("code", "stdout", "stderr"):
            if a[part] != b[part]:
                if part == "code":
                    print(f"    exit code {a[part]} -> {b[part]}")
                else:
                    sys.stdout.writelines(difflib.unified_diff(
                        str(a[part]).splitlines(True), str(b[part]).splitlines(True), f"before {part}",
                        f"after {part}"))
    print(f"{len(before)} calls before, {len(after)} after, {differ} differ, {wrapped} only in line wrapping")
    return differ


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    rec = sub.add_parser("record", help="run the calls through a venv's tooldisc and store the outputs")
    rec.add_argument("--venv", type=Path, default=REPO / ".venv")
    rec.add_argument("--repo", type=Path, default=REPO, help="where the shipped data files are read from")
    rec.add_argument("--out", type=Path, required=True)
    cmp = sub.add_parser("compare", help="compare two records")
    cmp.add_argument("before", type=Path)
    cmp.add_argument("after", type=Path)
    bad = sub.add_parser("hostile", help="run the calls with standard output that fails; exit 1 on any traceback")
    bad.add_argument("--venv", type=Path, default=REPO / ".venv")
    bad.add_argument("--repo", type=Path, default=REPO)
    bad.add_argument("--calls", type=int, default=None, help="only the first N calls")
    args = parser.parse_args()
    if args.what == "hostile":
        found = hostile(args.venv.absolute(), args.repo.absolute(), args.calls)
        print("\n".join(found) if found else "no traceback")
        return 1 if found else 0
    if args.what == "record":
        results = record(args.venv.absolute(), args.repo.absolute())
        args.out.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
        print(f"{len(results)} calls recorded in {args.out}", file=sys.stderr)
        return 0
    return 1 if compare(json.loads(args.before.read_text()), json.loads(args.after.read_text())) else 0


if __name__ == "__main__":
    sys.exit(main())
