"""``tooldisc eval``, ``sweep``, ``compare`` and ``gate``: measuring discovery on gold sets.

Thin glue: options are parsed here, the work is done by :mod:`tooldisc.evaluation`
(which calls only the discovery chokepoint), and documents are rendered by
:func:`tooldisc.reports.render`. Everything heavy is imported inside the
commands so ``tooldisc --help`` stays instant.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from tooldisc.cli.common import (
    FormatOption,
    JsonOption,
    resolve_format,
    write_atomic,
)
from tooldisc.cli.options import (
    CatalogOption,
    ConfigOption,
    ContextFileOption,
    ContextFlags,
    ForcedOption,
    KOption,
    ModeOption,
    PermissionOption,
    RoleOption,
    TenantOption,
    context_flags,
)

GoldOption = Annotated[str | None, typer.Option(
    "--gold", "-g", help="Gold set (JSON/JSONL/YAML, or a benchmark queries.jsonl). Default: the shipped gold set.")]
ByOption = Annotated[str, typer.Option(
    "--by", help="Slice the measures by these gold fields (comma-separated): category, difficulty, hard_case, intent.")]
OutOption = Annotated[str | None, typer.Option(
    "--out", "-o", help="Write the report to PATH instead of stdout (format from --format, else from the extension).")]
TimingsOption = Annotated[bool, typer.Option(
    "--timings", help="Add discovery latency p50/p95 (ms); output is then no longer byte-identical across runs.")]
ProgressOption = Annotated[bool | None, typer.Option(
    "--progress/--no-progress", help="Progress bar on stderr. Default: on for long runs on a terminal.")]
MissesOption = Annotated[int, typer.Option("--misses", min=0, help="How many of the worst misses to list.")]

_PROGRESS_MIN = 300  # queries; shorter runs finish before a bar is worth drawing
_SUFFIX_FORMAT = {".json": "json", ".md": "md", ".markdown": "md", ".html": "html", ".htm": "html"}


def _default_gold_path() -> Path:
    from importlib import resources

    return Path(str(resources.files("tooldisc.gold").joinpath("data/gold.json")))


def _load_gold(path: str | None, catalog: Any) -> Any:
    """The gold set, checked against the catalog: an unknown tool is an error, a version mismatch a note."""
    from tooldisc.cli.common import note
    from tooldisc.gold.loader import load_gold
    from tooldisc.gold.validate import validate_gold

    from tooldisc.errors import DataError

    gold = load_gold(path if path else _default_gold_path())
    issues = validate_gold(gold, catalog)
    errors = [i for i in issues if i.level == "error"]
    if errors:
        more = f" (and {len(errors) - 1} more; run 'tooldisc gold validate')" if len(errors) > 1 else ""
        raise DataError(errors[0].message + more, file=gold.source, where=errors[0].where)
    for issue in issues:
        note(f"warning: {issue.render(gold.source)}")
    return gold


@contextmanager
def _progress_bar(total: int, enabled: bool | None, label: str) -> Iterator[Callable[[int], None] | None]:
    """A rich progress bar on stderr for long runs; ``None`` when not shown."""
    show = enabled if enabled is not None else (total >= _PROGRESS_MIN and sys.stderr.isatty())
    if not show:
        yield None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(label, total=total)
        yield lambda done: bar.update(task, completed=done)


def _run(catalog: str | None, gold: str | None, config: str | None, flags: ContextFlags, k: int | str | None,
         progress: bool | None, *, quiet_context: bool = False, label: str = "discovering",
         engines: list[Any] | None = None) -> Any:
    """Load everything, build one Discoverer, and run every gold query through it.

    ``quiet_context`` drops the stderr note about the default context when the
    report on stdout already says which context was used. ``engines`` receives the
    Discoverer, for a caller that reuses its index (``eval --schemas``).
    """
    from tooldisc.cli.options import build_context_from, load_catalog_option
    from tooldisc.discovery.config import load_config
    from tooldisc.discovery.pipeline import Discoverer
    from tooldisc.evaluation.run import run_discovery

    cat = load_catalog_option(catalog)
    gold_set = _load_gold(gold, cat)
    cfg = load_config(config)
    ctx = build_context_from(cat, flags, quiet=quiet_context)
    engine = Discoverer(cat, cfg)
    if engines is not None:
        engines.append(engine)
    kk = cfg.k if k is None else k
    with _progress_bar(len(gold_set), progress, label) as tick:
        return run_discovery(engine, gold_set, ctx, kk, progress=tick)


def _emit(text: str, out: str | None) -> None:
    if out:
        from tooldisc.cli.common import note

        write_atomic(out, text)
        note(f"wrote {out}")
    else:
        sys.stdout.write(text)


def _out_format(fmt: str, json_: bool, out: str | None, allowed: tuple[str, ...]) -> str:
    """``--format``/``--json``; with ``--out`` and no explicit format, the file extension decides."""
    if out and not json_ and fmt == "table":
        fmt = _SUFFIX_FORMAT.get(Path(out).suffix.lower(), "table")
        if fmt == "table":
            from tooldisc.errors import UsageError

            raise UsageError(f"--out {out}: say --format ({', '.join(a for a in allowed if a != 'table')}) "
                             "or use a .json/.md/.html name")
    return resolve_format(fmt, json_, allowed)


def _by(text: str) -> tuple[str, ...]:
    """``--by`` fields, checked before any work is done."""
    from tooldisc.evaluation.run import SLICE_FIELDS

    from tooldisc.errors import UsageError

    fields = tuple(p.strip() for p in text.split(",") if p.strip())
    for name in fields:
        if name not in SLICE_FIELDS:
            raise UsageError(f"--by must name fields among {', '.join(SLICE_FIELDS)}; got {name!r}")
    return fields


# --- eval ------------------------------------------------------------------------


def eval_command(
    catalog: CatalogOption = None,
    gold: GoldOption = None,
    k: KOption = None,
    config: ConfigOption = None,
    mode: ModeOption = None,
    role: RoleOption = None,
    permission: PermissionOption = None,
    tenant: TenantOption = None,
    forced: ForcedOption = None,
    context_file: ContextFileOption = None,
    by: ByOption = "category,difficulty,hard_case,intent",
    misses: MissesOption = 10,
    timings: TimingsOption = False,
    out: OutOption = None,
    run_out: Annotated[str | None, typer.Option(
        "--run-out", help="Also write the offers as a TREC run (strictly decreasing scores).")] = None,
    progress: ProgressOption = None,
    schemas: Annotated[bool, typer.Option(
        "--schemas", help="Add schema tokens per request: full K=48 vs progressive K=15 + search_tools "
                          "(initial, incremental and wire tokens, and the wire saving).")] = False,
    fmt: FormatOption = "table",
    json_: JsonOption = False,
) -> None:
    """Run discovery over a gold set and report every measure, per-slice tables and the worst misses.

    With --k auto, measure names carry the config's adaptive.max_k (the largest offer
    adaptive K can give, so @K covers the whole offer) and avg_k reports the K used.
    --schemas adds a "schemas" section (independent of --k); without it the output is
    unchanged.
    """
    from tooldisc.cli.options import parse_k
    from tooldisc.evaluation.summary import eval_document

    out_fmt = _out_format(fmt, json_, out, ("table", "json", "md", "html"))
    by_fields = _by(by)
    flags = context_flags(tenant, role, permission, mode, forced, context_file)
    engines: list[Any] = []
    result = _run(catalog, gold, config, flags, parse_k(k), progress, quiet_context=out_fmt == "table",
                  engines=engines)
    doc = eval_document(result, by=by_fields, timings=timings, max_misses=misses)
    if schemas:
        from tooldisc.evaluation.schemas import schemas_section

        doc["schemas"] = schemas_section(result, engine=engines[0])
    if run_out:
        from tooldisc.gold.trec import run_text

        write_atomic(run_out, run_text(result.run()))
    _render_eval(doc, out_fmt, out)


def _render_eval(doc: dict[str, Any], fmt: str, out: str | None) -> None:
    _render(doc, fmt, out, "eval")


def _render(doc: dict[str, Any], fmt: str, out: str | None, kind: str) -> None:
    """One document in one format, to ``out`` or stdout."""
    from tooldisc.cli.reporting import report_text

    _emit(report_text(doc, kind, fmt), out)


# --- sweep -----------------------------------------------------------------------


def sweep_command(
    ks: Annotated[str, typer.Option("--k", help="The K values to read off one ranking, comma-separated.")] = "3,5,10,15,20,48",
    catalog: CatalogOption = None,
    gold: GoldOption = None,
    config: ConfigOption = None,
    mode: ModeOption = None,
    role: RoleOption = None,
    permission: PermissionOption = None,
    tenant: TenantOption = None,
    forced: ForcedOption = None,
    context_file: ContextFileOption = None,
    out: OutOption = None,
    progress: ProgressOption = None,
    fmt: FormatOption = "table",
    json_: JsonOption = False,
) -> None:
    """Measure every K from one ranking as deep as the largest K (discovery runs once).

    Schema tokens per offer are estimated with the agent package's calibrated token
    model (compact schemas); the output says so.
    """
    from tooldisc.evaluation.sweep import parse_ks, sweep_document

    out_fmt = _out_format(fmt, json_, out, ("table", "json", "md", "html"))
    k_values = parse_ks(ks)
    flags = context_flags(tenant, role, permission, mode, forced, context_file)
    result = _run(catalog, gold, config, flags, max(k_values), progress, quiet_context=out_fmt == "table")
    _render(sweep_document(result, k_values), out_fmt, out, "sweep")


# --- compare ---------------------------------------------------------------------


def compare_command(
    config_a: Annotated[str, typer.Argument(metavar="A.yaml", help="Baseline ranker config.")],
    config_b: Annotated[str, typer.Argument(metavar="B.yaml", help="Candidate ranker config.")],
    catalog: CatalogOption = None,
    gold: GoldOption = None,
    k: KOption = None,
    mode: ModeOption = None,
    role: RoleOption = None,
    permission: PermissionOption = None,
    tenant: TenantOption = None,
    forced: ForcedOption = None,
    context_file: ContextFileOption = None,
    permutations: Annotated[int, typer.Option("--permutations", min=1, help="Sign flips in the randomization test.")] = 10_000,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the randomization test.")] = 0,
    alpha: Annotated[float, typer.Option("--alpha", min=0.0, max=1.0, help="Significance level after Holm's correction.")] = 0.05,
    changed: Annotated[int, typer.Option("--changed", min=0, help="How many changed queries to list.")] = 20,
    out: OutOption = None,
    progress: ProgressOption = None,
    fmt: FormatOption = "table",
    json_: JsonOption = False,
) -> None:
    """Compare two ranker configs on the same queries, with paired significance tests.

    Per measure: A, B, delta, win/tie/loss, a seeded paired randomization test and a
    paired t-test, Holm-corrected across measures. Says "too small to tell" when a
    measure has fewer than 30 queries or fewer than 20 that moved.
    """
    from tooldisc.cli.options import build_context_from, load_catalog_option, parse_k
    from tooldisc.discovery.config import load_config
    from tooldisc.discovery.pipeline import Discoverer
    from tooldisc.evaluation.compare import compare_document
    from tooldisc.evaluation.run import run_discovery

    from tooldisc.errors import UsageError

    out_fmt = _out_format(fmt, json_, out, ("table", "json", "md", "html"))
    cat = load_catalog_option(catalog)
    gold_set = _load_gold(gold, cat)
    cfg_a, cfg_b = load_config(config_a), load_config(config_b)
    ctx = build_context_from(cat, context_flags(tenant, role, permission, mode, forced, context_file),
                             quiet=out_fmt == "table")
    kk = parse_k(k)
    if kk is None:
        if cfg_a.k != cfg_b.k:
            raise UsageError(f"A and B set different K ({cfg_a.k} and {cfg_b.k}); pass --k to compare at one K")
        kk = cfg_a.k
    if kk == "auto" and cfg_a.max_k != cfg_b.max_k:
        raise UsageError("with --k auto, A and B must share adaptive.max_k so their measures share a cutoff")
    runs = []
    for label, cfg in (("A", cfg_a), ("B", cfg_b)):
        with _progress_bar(len(gold_set), progress, f"discovering ({label})") as tick:
            runs.append(run_discovery(Discoverer(cat, cfg), gold_set, ctx, kk, progress=tick))
    doc = compare_document(runs[0], runs[1], permutations=permutations, seed=seed, alpha=alpha,
                           max_changed=changed)
    _render(doc, out_fmt, out, "compare")


# --- gate ------------------------------------------------------------------------


def gate_command(
    min_: Annotated[list[str] | None, typer.Option("--min", help="MEASURE=VALUE that must be at least VALUE (repeatable).")] = None,
    max_: Annotated[list[str] | None, typer.Option("--max", help="MEASURE=VALUE that must be at most VALUE (repeatable).")] = None,
    from_: Annotated[str | None, typer.Option("--from", help="Read measures from an eval JSON (tooldisc eval --format json) instead of running eval.")] = None,
    catalog: CatalogOption = None,
    gold: GoldOption = None,
    k: KOption = None,
    config: ConfigOption = None,
    mode: ModeOption = None,
    role: RoleOption = None,
    permission: PermissionOption = None,
    tenant: TenantOption = None,
    forced: ForcedOption = None,
    context_file: ContextFileOption = None,
    junit: Annotated[str | None, typer.Option("--junit", help="Write a JUnit XML report to PATH.")] = None,
    summary: Annotated[str | None, typer.Option("--summary", help="Append a Markdown summary to PATH (e.g. $GITHUB_STEP_SUMMARY).")] = None,
    progress: ProgressOption = None,
    fmt: FormatOption = "table",
    json_: JsonOption = False,
) -> None:
    """Check eval measures against thresholds: exit 0 when all hold, 1 when any fails, 2 on bad input.

    Runs eval with the given flags (measures with a cutoff up to the run's K may be
    gated), or reads an eval JSON with --from.
    """
    from tooldisc.evaluation.gate import check, gate_document, junit_xml, parse_thresholds

    from tooldisc.errors import UsageError

    out_fmt = resolve_format(fmt, json_, ("table", "json", "md"))
    thresholds = parse_thresholds(min_ or (), max_ or ())
    eval_flags = {"--catalog": catalog, "--gold": gold, "--k": k, "--config": config, "--mode": mode,
                  "--role": role, "--permission": permission, "--tenant": tenant, "--forced": forced,
                  "--context-file": context_file}
    if from_:
        given = [name for name, value in eval_flags.items() if value]
        if given:
            raise UsageError(f"--from reads finished eval results; it cannot be combined with {', '.join(given)}")
        metrics, source = _read_eval_json(from_), from_
    else:
        from tooldisc.cli.options import parse_k
        from tooldisc.evaluation.summary import check_measurable, eval_document

        check_measurable([t.measure for t in thresholds])
        flags = context_flags(tenant, role, permission, mode, forced, context_file)
        result = _run(catalog, gold, config, flags, parse_k(k), progress)
        deep = [t for t in thresholds if t.measure.cutoff is not None and t.measure.cutoff > result.cutoff]
        if deep:
            raise UsageError(f"{deep[0].measure} looks deeper than the run's offers (K={result.k}, at most "
                             f"{result.cutoff} tools); run with --k {deep[0].measure.cutoff} or more")
        doc = eval_document(result, by=(), max_misses=0, extra=[t.measure for t in thresholds])
        metrics, source = doc["metrics"], None
    checks = check(thresholds, metrics, source=source)
    gate_doc = gate_document(checks, source=source)
    from tooldisc.cli.reporting import report_text

    if junit:
        write_atomic(junit, junit_xml(checks))
    if summary:
        Path(summary).parent.mkdir(parents=True, exist_ok=True)
        with open(summary, "a", encoding="utf-8") as fh:
            fh.write(report_text(gate_doc, "gate", "md"))
    sys.stdout.write(report_text(gate_doc, "gate", out_fmt))
    if not gate_doc["passed"]:
        raise typer.Exit(1)


def _read_eval_json(path: str) -> dict[str, Any]:
    """The ``metrics`` mapping of an eval JSON; anything else is a one-line DataError."""
    import json

    from tooldisc.discovery.catalog_io import read_text

    from tooldisc.errors import DataError

    text = read_text(path, max_bytes=64 * 1024 * 1024, what="eval results")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(f"invalid JSON: {exc.msg}", file=path, where=f"line {exc.lineno} column {exc.colno}") from None
    metrics = data.get("metrics") if isinstance(data, dict) else None
    if not isinstance(metrics, dict) or not all(
            v is None or (isinstance(v, int | float) and not isinstance(v, bool)) for v in metrics.values()):
        raise DataError("expected the output of 'tooldisc eval --format json': an object whose 'metrics' maps "
                        "measure names to numbers", file=path, where="metrics")
    return metrics


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_command)
    app.command("sweep")(sweep_command)
    app.command("compare")(compare_command)
    app.command("gate")(gate_command)
