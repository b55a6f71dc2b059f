"""``tooldisc gold``: validate, describe, split and export gold sets.

A thin layer over :mod:`tooldisc.gold` (loader, validate, stats, trec): options are
parsed here, the library does the work, and the result is rendered as a table or
JSON. Exit codes (STYLE 8): ``validate`` 0 when there are no errors, 1 when the file
parses but has errors, 2 when it cannot be read or parsed; every other failure is
bad input, exit 2.

A gold set in the external benchmark format (``queries.jsonl`` with ``relevant``)
names the tools of its own ``tools.jsonl``, never those of the shipped catalog, so
``validate`` refuses to check it against the shipped catalog and asks for
``--catalog``: a default that reports every tool as unknown would only mislead.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated, Any

import typer

from tooldisc.cli.common import (
    FormatOption,
    echo,
    note,
    output_options,
    print_json,
    print_report,
)
from tooldisc.cli.limits import count_option
from tooldisc.cli.options import CatalogFormatOption, NoCacheOption
from tooldisc.cli.outputs import STDOUT, Folder, Output, folder_option, output_option
from tooldisc.errors import UsageError

gold_app = typer.Typer(
    name="gold",
    help="Validate, summarise, split and export gold query sets.",
    no_args_is_help=True,
    rich_markup_mode=None,
)

GoldArg = Annotated[str, typer.Argument(help="Gold set (JSON/JSONL/YAML, or a benchmark queries.jsonl).")]


def _load(path: str, *, check: bool = True) -> Any:
    from tooldisc.gold.loader import load_gold

    return load_gold(path, check=check)


def _is_external(gold: Any) -> bool:
    """True when the rows were in the external benchmark format (the loader notes it)."""
    from tooldisc.gold.loader import EXTERNAL_NOTE

    return EXTERNAL_NOTE in gold.notes


# --------------------------------------------------------------------------- validate

@gold_app.command("validate")
@output_options("gold-validate")
def validate_command(
    path: GoldArg,
    catalog: Annotated[str | None, typer.Option(
        "--catalog", "-c",
        help="Catalog the gold set is checked against. Default: the shipped catalog; "
             "required for the external benchmark format (give its tools.jsonl).")] = None,
    catalog_format: CatalogFormatOption = None,
    no_cache: NoCacheOption = False,
    fmt: FormatOption = "table",
) -> None:
    """List every issue (errors, then warnings) with its file and place.

    Errors: a tool the catalog lacks, a duplicate id, an empty query, a tool both
    expected and forbidden, a no-match query with expected tools, a matched query
    without a primary tool. Warnings: a catalog version mismatch, a tool both primary
    and acceptable. Exit 0 without errors, 1 with errors, 2 when unreadable.
    """
    from tooldisc.cli.options import index_cache, load_catalog_option
    from tooldisc.gold.validate import validate_gold

    gold = _load(path, check=False)
    external = _is_external(gold)
    if external and catalog is None:
        raise UsageError("a gold set in the external benchmark format names the tools of its own tools.jsonl; "
                         "give it with --catalog", file=path)
    cat = load_catalog_option(catalog, catalog_format, index_cache(no_cache))
    issues = validate_gold(gold, cat)
    counts = Counter(i.level for i in issues)
    summary: dict[str, Any] = {
        "file": path,
        "format": "external" if external else "tooldisc",
        "queries": len(gold),
        "dataset_version": gold.dataset_version,
        "catalog_version": gold.catalog_version,
        "catalog": {"source": cat.source, "version": cat.version, "hash": cat.hash, "tools": len(cat)},
        "valid": not counts["error"],
        "counts": {lvl: counts[lvl] for lvl in ("error", "warning")},
        "issues": [{"level": i.level, "file": path, "where": i.where, "message": i.message} for i in issues],
    }
    print_report(summary, "gold-validate", fmt)
    if counts["error"]:
        raise typer.Exit(1)


# --------------------------------------------------------------------------- stats

def gold_summary(gold: Any) -> dict[str, Any]:
    """The library's slice counts plus the label facts a reviewer checks next.

    ``avg_primary_tools`` averages over matched queries only: no-match queries have
    none by definition and would drag the mean toward zero.
    """
    from tooldisc.gold.stats import gold_stats

    qs = gold.queries
    matched = [q for q in qs if q.matched]
    avg_primary = sum(len(q.primary_expected_tools) for q in matched) / len(matched) if matched else None
    return {
        "file": gold.source,
        "dataset_version": gold.dataset_version,
        "catalog_version": gold.catalog_version,
        **gold_stats(gold).to_dict(),
        "with_history": sum(1 for q in qs if q.history),
        "require_all_primary": sum(1 for q in qs if q.require_all_primary),
        "with_forbidden": sum(1 for q in qs if q.forbidden_tools),
        "avg_primary_tools": round(avg_primary, 4) if avg_primary is not None else None,
    }


@gold_app.command("stats")
@output_options("gold-stats")
def stats_command(
    path: GoldArg,
    fmt: FormatOption = "table",
) -> None:
    """Query counts by intent, category, difficulty, hard case and language; matched/no-match; label facts."""
    print_report(gold_summary(_load(path)), "gold-stats", fmt)


# --------------------------------------------------------------------------- split

def _document_metadata(path: str, gold: Any) -> dict[str, Any]:
    """Top-level keys of the source document (all but ``queries``), in file order.

    A list, JSONL or external file has none, so the set's own versions and notes
    stand in; the notes matter there (an external set carries no policy).
    """
    import json

    from tooldisc.documents import loads_json, parse_yaml, read_text

    text = read_text(path, max_bytes=64 * 1024 * 1024, what="gold set")
    data: Any = None
    try:
        data = loads_json(text, path)
    except json.JSONDecodeError:
        if not text.lstrip().startswith(("{", "[")):
            data = parse_yaml(text, path)
    if isinstance(data, dict) and isinstance(data.get("queries"), list):
        return {k: v for k, v in data.items() if k != "queries"}
    meta: dict[str, Any] = {"dataset_version": gold.dataset_version, "catalog_version": gold.catalog_version}
    if gold.notes:
        meta["notes"] = list(gold.notes)
    return meta


def _split_text(meta: dict[str, Any], part: str, queries: Any) -> str:
    """One split file: the source's metadata with ``split`` set, then the queries, in a fixed layout."""
    import json

    doc = {**meta, "split": part, "queries": [q.to_dict() for q in queries]}
    return json.dumps(doc, ensure_ascii=False, indent=1) + "\n"


@gold_app.command("split")
@output_options("gold-split")
def split_command(
    path: GoldArg,
    out_dir: Annotated[Folder, folder_option("--out-dir", "-o", help="Directory for <stem>.tune.json and <stem>.test.json.")],
    test_fraction: Annotated[float, typer.Option("--test-fraction", help="Share of each stratum that goes to test.")] = 0.3,
    seed: Annotated[int, count_option("seed", "--seed", help="Seed of the split (same seed, same split, on any machine).")] = 0,
    fmt: FormatOption = "table",
) -> None:
    """Split a gold set into tune and test parts, stratified by (intent, no_match).

    Each stratum sends round(n × test fraction) queries to test, chosen by a SHA-256
    of seed and id, so reruns write identical bytes. Both files keep the source's
    top-level metadata with ``split`` set to ``tune`` or ``test``.
    """
    from tooldisc.gold.stats import split

    stem = Path(path).stem
    outputs = {part: out_dir.reserve(f"{stem}.{part}.json") for part in ("tune", "test")}  # before any work
    files = {part: Path(o.path) for part, o in outputs.items()}
    gold = _load(path)
    tune, test = split(gold, test_fraction=test_fraction, seed=seed)
    meta = _document_metadata(path, gold)
    for part, subset in (("tune", tune), ("test", test)):
        outputs[part].write(_split_text(meta, part, subset.queries))
    strata = _strata(tune, test)
    result = {
        "source": path,
        "test_fraction": test_fraction,
        "seed": seed,
        "tune": {"file": str(files["tune"]), "queries": len(tune)},
        "test": {"file": str(files["test"]), "queries": len(test)},
        "strata": strata,
    }
    print_report(result, "gold-split", fmt)


def _strata(tune: Any, test: Any) -> list[dict[str, Any]]:
    """Counts per (intent, no_match) stratum, the key the library splits on, sorted."""
    t = Counter((q.intent, q.no_match) for q in tune.queries)
    s = Counter((q.intent, q.no_match) for q in test.queries)
    return [{"intent": intent, "no_match": nm, "queries": t[(intent, nm)] + s[(intent, nm)],
             "tune": t[(intent, nm)], "test": s[(intent, nm)]}
            for intent, nm in sorted(set(t) | set(s))]


# --------------------------------------------------------------------------- qrels

@gold_app.command("qrels")
@output_options("gold-qrels")
def qrels_command(
    path: GoldArg,
    out_path: Annotated[Any, output_option("--out", "-o", help="Qrels file to write; '-' writes to stdout.",
                                                    stdout=True)],
    topics_out: Annotated[Output | None, output_option(
        "--topics-out", help="Also write the topics file (one 'qid<TAB>query' line per query, no header): "
                             "with the qrels it reads back as a gold set (tooldisc eval --qrels --topics).")] = None,
    fmt: FormatOption = "table",
) -> None:
    """Export TREC qrels (``qid 0 tool grade``; primary 2, acceptable 1) for trec_eval and ir_measures.

    hit, recall and MRR count grade 2 only (ir_measures ``Success(rel=2)``, ``R(rel=2)``,
    ``RR(rel=2)``); P counts grade 1 and up; nDCG uses the grades as gains.
    """
    import sys

    from tooldisc.gold.trec import qrels_text, topics_text

    gold = _load(path)
    text = qrels_text(gold)
    topics = topics_text(gold) if topics_out else None
    if isinstance(out_path, Output):
        out_path.write(text)
    else:
        sys.stdout.write(text)
    if topics_out and topics is not None:
        topics_out.write(topics)
    if out_path == STDOUT:
        return
    lines = text.count("\n")
    judged = len({line.split(" ", 1)[0] for line in text.splitlines()})
    if judged < len(gold):
        note(f"note: {len(gold) - judged} query(ies) name no tool (no-match) and have no qrels line")
    result: dict[str, Any] = {"source": path, "out": str(out_path), "lines": lines, "queries": len(gold),
                              "judged_queries": judged}
    if topics_out:
        result["topics"] = str(topics_out)
    if fmt == "json":
        print_json(result)
    else:
        also = f" and {topics_out}: {len(gold)} topics" if topics_out else ""
        echo(f"wrote {out_path}: {lines} judgments for {judged} of {len(gold)} queries{also}")


def register(app: typer.Typer) -> None:
    app.add_typer(gold_app, name="gold")
