"""``tooldisc compare A B [C …]`` and ``tooldisc fuse``: runs side by side, and runs made one.

Thin glue: arms are parsed by :mod:`tooldisc.evaluation.arms`, every config arm runs
through the discovery chokepoint, run-file arms are read by
:mod:`tooldisc.evaluation.run_file`, the tests are :func:`tooldisc.evaluation.compare.compare`'s
and the report is :func:`tooldisc.reports.render`'s. Heavy imports stay inside the commands.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated, Any

import typer

from tooldisc.cli.common import FormatOption, output_options
from tooldisc.cli.limits import count_option
from tooldisc.cli.options import (
    CatalogFormatOption,
    CatalogOption,
    ContextFlags,
    KOption,
    LearnedOption,
    NoCacheOption,
    context_options,
    index_cache,
)
from tooldisc.cli.outputs import Output, output_option
from tooldisc.cli.runs import (
    ByOption,
    GoldOption,
    OutOption,
    ProgressOption,
    QrelsOption,
    TopicsOption,
    check_by,
    discover_all,
    emit,
    load_inputs,
    parse_by,
    render,
)

MIN_PERMUTATIONS = 10_000


def _arms(positional: list[str] | None, runs: list[str] | None, learned: str | None, learned_a: str | None,
          learned_b: str | None) -> tuple[Any, ...]:
    """Every arm, labelled, checked before any file is loaded."""
    from tooldisc.errors import UsageError
    from tooldisc.evaluation.arms import (
        DEFAULT,
        parse_arm,
        parse_run_option,
        unique_labels,
        with_learned,
    )

    texts = list(positional or ())
    if len(texts) + len(runs or ()) < 2 and (learned_a or learned_b):
        texts += [DEFAULT] * (2 - len(texts) - len(runs or ()))  # `compare --learned-b L`: default against default+L
    specs = [parse_arm(t) for t in texts] + [parse_run_option(t) for t in runs or ()]
    if len(specs) < 2:
        raise UsageError("compare needs at least two arms: A B [C …] (a config file, 'default', CONFIG+LEARNED.json, "
                         "a learned file or a run file) and/or --run NAME=run.trec")
    return unique_labels(with_learned(specs, every=learned, first=learned_a, second=learned_b))


@context_options
@output_options("compare", out="out")
def compare_command(
    arms: Annotated[list[str] | None, typer.Argument(
        metavar="ARM...", help="Two or more arms, the first the baseline: 'default' (the shipped config), a config "
                               "file, CONFIG+LEARNED.json, a learned file, or a TREC run file; NAME=ARM labels one.",
        show_default=False)] = None,
    run: Annotated[list[str] | None, typer.Option(
        "--run", help="[NAME=]run.trec: any retriever's TREC run as one more arm, scored with the same gold set, "
                      "K and measures (repeatable).")] = None,
    catalog: CatalogOption = None,
    catalog_format: CatalogFormatOption = None,
    gold: GoldOption = None,
    k: KOption = None,
    context: ContextFlags = ContextFlags(),
    qrels: QrelsOption = None,
    topics: TopicsOption = None,
    learned: LearnedOption = None,
    learned_a: Annotated[str | None, typer.Option("--learned-a", help="A learned file for the first arm only (overrides --learned).")] = None,
    learned_b: Annotated[str | None, typer.Option("--learned-b", help="A learned file for the second arm only (overrides --learned).")] = None,
    by: ByOption = None,
    permutations: Annotated[int, count_option(
        "permutations", "--permutations", low=MIN_PERMUTATIONS,
        help="Sign flips in the randomization test (a second opinion).")] = 10_000,
    seed: Annotated[int, count_option("seed", "--seed", help="Seed of the randomization test and the bootstrap.")] = 0,
    resamples: Annotated[int, count_option(
        "resamples", "--resamples",
        help="Bootstrap resamples behind each change's 95 % interval (paired, over queries).")] = 10_000,
    alpha: Annotated[float, typer.Option("--alpha", min=0.0, max=1.0, help="Significance level after Holm's correction.")] = 0.05,
    changed: Annotated[int, count_option("listed", "--changed", help="How many changed queries to list (two arms).")] = 20,
    moves: Annotated[int, count_option(
        "listed", "--moves", help="How many of each arm's worst losses and biggest wins to list per headline measure.")] = 10,
    fail_if_worse: Annotated[bool, typer.Option(
        "--fail-if-worse", help="Exit 1 when an arm is significantly worse than the baseline on any measure (sign "
                                "test, Holm), or makes any query worse and none better on forbidden@K or "
                                "false_abstention.")] = False,
    out: OutOption = None,
    progress: ProgressOption = None,
    no_cache: NoCacheOption = False,
    fmt: FormatOption = "table",
) -> None:
    """Compare runs on the same queries: one table, arms as columns, paired tests against the first arm.

    The report opens with the decision (an arm significantly worse, better, or no
    significant difference). Per measure and arm: the value, a marker where the arm
    differs significantly from the baseline (exact sign test over the queries that moved,
    Holm-corrected across measures and arms; the randomization test and t-test are
    reported beside it), win/tie/loss, the change against the baseline with its 95 %
    interval (a seeded paired bootstrap), and each arm's worst losses and biggest wins
    per headline measure. A measure is "too
    small to tell" only when the sign test cannot reach alpha/m at all (stderr says so).
    With --fail-if-worse the exit code is 1 on a significant regression, or on any query
    made worse and none better on forbidden@K or false_abstention.
    """
    from tooldisc.cli.common import note
    from tooldisc.cli.options import parse_k
    from tooldisc.evaluation.api import score_eval
    from tooldisc.evaluation.compare import compare, shared_k
    from tooldisc.evaluation.inputs import learned_notes, load_config_input, load_learned_input
    from tooldisc.evaluation.run_file import load_run_file

    by_fields = parse_by(by)
    specs = _arms(arms, run, learned, learned_a, learned_b)
    configs = [s for s in specs if not s.is_run]
    first = configs[0] if configs else None
    cache = index_cache(no_cache)
    inputs = load_inputs(catalog, gold, first.config if first else None, context, qrels=qrels, topics=topics,
                     quiet_context=fmt == "table", catalog_format=catalog_format,
                     learned=first.learned if first else None, cache=cache)
    check_by(inputs.gold, by_fields)
    arm_inputs: dict[str, Any] = {}
    for spec in configs:
        if spec is first:
            arm_inputs[spec.name] = inputs
            continue
        file = load_learned_input(spec.learned)
        for line in learned_notes(file, inputs.catalog):
            note(line)
        arm_inputs[spec.name] = replace(inputs, config=load_config_input(spec.config), learned=file)
    kk = shared_k(*(i.config for i in arm_inputs.values()), k=parse_k(k)) if configs else (parse_k(k) or inputs.config.k)
    runs = []
    for spec in specs:
        if spec.is_run:
            result = load_run_file(spec.run, inputs, kk)
            for line in result.run_file.notes:
                note(line)
        else:
            result = discover_all(arm_inputs[spec.name], kk, progress, label=f"discovering ({spec.name})",
                               cache=cache)
        runs.append(score_eval(result))
    comparison = compare(*runs, names=[s.name for s in specs], permutations=permutations, seed=seed, alpha=alpha,
                         resamples=resamples)
    doc = comparison.document(max_changed=changed, max_moves=moves, by=by_fields)
    render(doc, fmt, out, "compare")
    _report_failures(comparison, doc, fail_if_worse)


def _report_failures(comparison: Any, doc: dict[str, Any], fail_if_worse: bool) -> None:
    """Too-small measures on stderr (always); with --fail-if-worse, the regressions and exit 1."""
    from tooldisc.cli.common import note

    two = len(comparison.names) == 2
    small = [r for r in doc["measures"] if r["verdict"] == "too small to tell"]
    if small:
        def named(rows: list[dict[str, Any]]) -> str:
            return ", ".join(r["measure"] if two else f"{r['measure']} ({r['arm']})" for r in rows)

        empty = [r for r in small if not r["n"]]
        few = [r for r in small if r["n"]]
        why = []
        if few:
            why.append(f"{named(few)}: fewer than {doc['sign_test_needs']} queries moved, the fewest whose sign test "
                       f"can reach alpha/m = {doc['alpha']:g}/{doc['tests']}")
        if empty:
            why.append(f"{named(empty)}: no query in its domain")
        lead = "--fail-if-worse cannot judge these, too small to tell" if fail_if_worse else "too small to tell"
        note(f"note: {lead}: {'; '.join(why)}")
    if not fail_if_worse:
        return
    regressions = comparison.regressions.to_dicts()
    if regressions:
        for r in regressions:
            who = "B" if two else r["arm"]
            base = "A" if two else comparison.names[0]
            if r["reason"] == "significantly worse":
                note(f"{who} is significantly worse than {base} on {r['measure']}")
            else:
                note(f"{who} made {r['measure']} worse on some queries and better on none ({r['reason']})")
        raise typer.Exit(1)


@output_options("fuse")
def fuse_command(
    runs: Annotated[list[str], typer.Argument(metavar="RUN...", help="Two or more TREC run files.", show_default=False)],
    out: Annotated[Output, output_option("--out", "-o", help="Write the fused TREC run here.")],
    method: Annotated[str, typer.Option("--method", help="rrf (reciprocal rank fusion) or combmnz (min-max, then CombMNZ).")] = "rrf",
    rrf_k: Annotated[int, count_option("rrf_k", "--rrf-k", help="RRF's constant k: 1 / (k + rank).")] = 60,
    depth: Annotated[int | None, count_option("depth", "--depth", help="Keep this many tools per query (default: all).")] = None,
    run_tag: Annotated[str | None, typer.Option("--run-tag", help="The tag column (default: the method).")] = None,
    fmt: FormatOption = "table",
) -> None:
    """Fuse TREC runs into one (ties by tool name), e.g. tooldisc's --run-out with an embedding retriever's run.

    Names are read and written with the TREC-safe encoding (percent-encoded whitespace,
    control characters and %). The fused run is an arm for 'compare --run'.
    """
    from tooldisc.cli.common import print_json
    from tooldisc.evaluation.fuse import fuse
    from tooldisc.gold.trec import read_scored_run, run_text

    tag = run_tag or method
    read = [read_scored_run(path) for path in runs]
    fused = fuse(read, method, k=rrf_k, depth=depth)
    text = run_text({q: tuple(t for t, _ in r) for q, r in fused.items()}, tag,
                    scores={q: tuple(s for _, s in r) for q, r in fused.items()})
    out.write(text)
    summary = {"method": method, "k": rrf_k if method == "rrf" else None, "runs": list(runs), "out": str(out),
               "queries": len(fused), "lines": sum(len(r) for r in fused.values()), "tag": tag}
    if fmt == "json":
        print_json(summary)
    else:
        emit(f"fused {len(runs)} runs with {method}{f' (k={rrf_k})' if method == 'rrf' else ''}: "
              f"{summary['queries']} queries, {summary['lines']} lines -> {out}\n", None)


def register(app: typer.Typer) -> None:
    app.command("compare")(compare_command)
    app.command("fuse")(fuse_command)
