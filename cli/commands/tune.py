"""``tooldisc tune``: choose ranker weights by k-fold cross-validation over gold sets.

Thin glue over :class:`tooldisc.evaluation.tune.WeightTuner`: load the (catalog,
gold) pairs, fit once, render the per-fold train vs held-out table (or JSON), and
write the weights file atomically. Heavy imports stay inside the command.
"""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

from tooldisc.cli.common import FormatOption, output_options
from tooldisc.cli.limits import count_option
from tooldisc.cli.options import CatalogFormatOption
from tooldisc.cli.outputs import Output, output_option

CatalogsOption = Annotated[list[str] | None, typer.Option(
    "--catalog", "-c", help="Catalog of one dataset (repeatable; pairs with --gold in order). "
                            "Default: both shipped gold sets (the business set and the devops set), "
                            "each with its catalog.")]
GoldsOption = Annotated[list[str] | None, typer.Option(
    "--gold", "-g", help="Gold set of one dataset (repeatable; pairs with --catalog in order).")]


@output_options("tune")
def tune_command(
    catalog: CatalogsOption = None,
    gold: GoldsOption = None,
    catalog_format: CatalogFormatOption = None,
    space: Annotated[str | None, typer.Option(
        "--space", help="Search space YAML: config key → list of choices or {low, high}. "
                        "Default: the shipped space (weights.bm25, ngram, alias, prior, history).")] = None,
    folds: Annotated[int, count_option("folds", "--folds", help="Cross-validation folds per dataset.")] = 5,
    n_iter: Annotated[int, count_option("n_iter", "--n-iter", help="Random draws competing with the base config.")] = 40,
    objective: Annotated[str, typer.Option(
        "--objective", help="Measure to maximise, optionally minus a weighted penalty: "
                            "'nDCG@10', 'nDCG@10 - 0.5*forbidden@10'.")] = "nDCG@10",
    k: Annotated[int, count_option("k", "--k", help="K every offer is cut at while tuning.")] = 10,
    seed: Annotated[int, count_option("seed", "--seed", help="Seeds the random draws and the folds.")] = 0,
    learned: Annotated[str | None, typer.Option(
        "--learned", help="A learned file whose expansions, abstention and mutation parts apply to every "
                          "candidate (its ranker does not: the weights are what is searched).")] = None,
    out: Annotated[Output | None, output_option(
        "--out", "-o", help="Write the chosen weights YAML here (tuned keys only; overlays the shipped default).")] = None,
    progress: Annotated[bool | None, typer.Option(
        "--progress/--no-progress", help="Progress bar on stderr. Default: on when stderr is a terminal.")] = None,
    fmt: FormatOption = "table",
) -> None:
    """Search ranker weights with k-fold cross-validation over one or more datasets.

    Every candidate runs through the discovery pipeline on every dataset; for each
    fold the best candidate on the other folds is scored on that fold, so the
    held-out column says how well the chosen weights generalise. The weights
    written are the best on all data. Output is byte-identical for the same inputs.
    """
    from tooldisc.cli.common import note
    from tooldisc.cli.reporting import report_text
    from tooldisc.errors import UsageError
    from tooldisc.evaluation.tune import WeightTuner, load_space, parse_objective
    from tooldisc.evaluation.tune.report import tune_document, weights_yaml

    catalogs, golds = list(catalog or ()), list(gold or ())
    if len(catalogs) != len(golds):
        raise UsageError(f"--catalog and --gold come in pairs; got {len(catalogs)} --catalog and {len(golds)} --gold")
    from tooldisc.limits import check_count

    for name, option, value in (("folds", "--folds", folds), ("n_iter", "--n-iter", n_iter), ("k", "--k", k)):
        check_count(name, value, option)  # the rule the option declares, also when called from Python
    parse_objective(objective)  # a bad objective or space fails before any data is loaded
    space_map, _ = load_space(space)
    from tooldisc.cli.options import load_learned_option

    tuner = WeightTuner(space=space_map, objective=objective, n_iter=n_iter, cv=folds, k=k, random_state=seed,
                        learned=load_learned_option(learned))
    datasets = _datasets(catalogs, golds, catalog_format)
    total = (n_iter + 1) * len(datasets)
    from tooldisc.cli.progress import progress_bar

    with progress_bar("tuning", total, enabled=progress) as bar:
        tuner.fit(datasets, progress=bar.set if bar else None)
    doc = tune_document(tuner, datasets)
    if out:
        out.write(weights_yaml(tuner, datasets))
        note(f"wrote {out}")
    sys.stdout.write(report_text(doc, "tune", fmt))


def _datasets(catalogs: list[str], golds: list[str], catalog_format: str | None = None) -> list[tuple[Any, Any]]:
    """(catalog, gold) pairs, each gold checked against its catalog; default: every shipped pair.

    Weights tuned on one gold set mostly learn that set; the shipped default was chosen
    over both of ours, so that is what a bare ``tooldisc tune`` reproduces.
    """
    from tooldisc.cli.common import note
    from tooldisc.cli.options import load_catalog_option
    from tooldisc.discovery.catalog.io import shipped_datasets
    from tooldisc.evaluation.inputs import load_gold_input

    if not catalogs:
        pairs = shipped_datasets()
        catalogs, golds = [str(c) for c, _ in pairs], [str(g) for _, g in pairs]
    out = []
    for c, g in zip(catalogs, golds, strict=True):
        cat = load_catalog_option(c, catalog_format)
        gold, warnings = load_gold_input(g, cat)
        for line in warnings:
            note(line)
        out.append((cat, gold))
    return out




def register(app: typer.Typer) -> None:
    app.command("tune")(tune_command)
