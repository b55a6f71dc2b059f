"""``tooldisc learn``: fit a learned file from labelled traffic.

Thin glue over :func:`tooldisc.evaluation.learn.learn`: load the catalog and the
examples, fit with a progress bar on stderr, write the learned file atomically and
print what each part gained on held-out folds (a table, or JSON).
"""

from __future__ import annotations

from typing import Annotated

import typer

from tooldisc.cli.common import FormatOption, output_options
from tooldisc.cli.limits import count_option
from tooldisc.cli.options import CatalogOption, ConfigOption
from tooldisc.cli.outputs import Output, output_option

FromOption = Annotated[list[str] | None, typer.Option(
    "--from", help="Labelled requests: a gold set, or a queries.jsonl with query, relevant (empty: no tool "
                   "fits) and optional intent (repeatable).")]


@output_options("learn")
def learn_command(
    from_: FromOption = None,
    out: Annotated[Output | None, output_option("--out", "-o", help="Write the learned file here (JSON).")] = None,
    catalog: CatalogOption = None,
    config: ConfigOption = None,
    expansions: Annotated[bool, typer.Option("--expansions/--no-expansions",
                                             help="Learn query expansions per tool.")] = True,
    affinity: Annotated[bool, typer.Option("--affinity/--no-affinity",
                                           help="Learn a weight per expansion phrase (how much it sets its tool apart).")] = True,
    ranker: Annotated[bool, typer.Option("--ranker/--no-ranker", help="Learn ranking weights.")] = True,
    clauses: Annotated[bool, typer.Option("--clauses/--no-clauses",
                                          help="Learn the weight of per-clause ranking (multi-step requests).")] = True,
    abstention: Annotated[bool, typer.Option("--abstention/--no-abstention",
                                             help="Learn the calibrated no-match model.")] = True,
    mutation: Annotated[bool, typer.Option("--mutation/--no-mutation",
                                           help="Learn when to narrow the word lists' mutation class.")] = True,
    min_requests: Annotated[int, count_option(
        "min_requests", "--min-requests",
        help="k: requests, distinct after scrubbing, that must share a phrase before it is stored.")] = 3,
    max_phrases: Annotated[int, count_option("max_phrases", "--max-phrases", help="Expansion phrases kept per tool.")] = 256,
    false_abstention: Annotated[float, typer.Option(
        "--false-abstention", help="Target share of matched requests that may get an empty offer.")] = 0.01,
    folds: Annotated[int, count_option("folds", "--folds", help="Cross-fitting and judging folds.")] = 5,
    sample: Annotated[int, count_option(
        "sample", "--sample", help="Matched requests whose ranking features are computed for fitting.")] = 3000,
    alpha: Annotated[float, typer.Option(
        "--alpha", help="A part is kept when it wins on held-out folds at this significance.")] = 0.05,
    seed: Annotated[int, count_option("seed", "--seed", help="Seeds the folds and the sample.")] = 0,
    progress: Annotated[bool | None, typer.Option(
        "--progress/--no-progress", help="Progress bar on stderr. Default: on when stderr is a terminal.")] = None,
    fmt: FormatOption = "table",
) -> None:
    """Learn expansions, phrase weights, ranking weights, a no-match model and a mutation check from labelled requests.

    Each part is fitted by cross-fitting and kept only when it wins significantly on
    held-out folds against discovery without it; the file says what was kept and why.
    Learned data may rank and abstain; it never authorizes a tool.
    """
    from tooldisc.cli.common import note
    from tooldisc.cli.options import load_catalog_option
    from tooldisc.discovery.config import load_config
    from tooldisc.discovery.learned import dumps_learned
    from tooldisc.errors import UsageError
    from tooldisc.evaluation.learn import LearnOptions, learn
    from tooldisc.evaluation.learn.data import load_examples

    if not out:
        raise UsageError("learn needs --out LEARNED (where to write the learned file)")
    opts = LearnOptions(expansions=expansions, affinity=affinity, ranker=ranker, clauses=clauses, abstention=abstention,
                        mutation=mutation, min_requests=min_requests, max_phrases=max_phrases, folds=folds, sample=sample,
                        target_false_abstention=false_abstention, alpha=alpha, seed=seed)
    cat = load_catalog_option(catalog)
    cfg = load_config(config)
    examples = load_examples(list(from_ or ()), cat)
    from tooldisc.cli.progress import progress_bar

    with progress_bar("learning", enabled=progress) as bar:
        learned = learn(cat, examples, opts, cfg,
                        progress=(lambda stage, done, total: bar.set(done, total)) if bar else None)
    out.write(dumps_learned(learned))
    note(f"wrote {out} ({', '.join(learned.parts) or 'no part kept'})")
    from tooldisc.cli.common import print_report

    print_report({"out": out.path, "parts": list(learned.parts), "report": learned.report}, "learn", fmt)


def register(app: typer.Typer) -> None:
    app.command("learn")(learn_command)
