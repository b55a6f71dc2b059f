"""The evaluation API for notebooks and scripts: ``tooldisc.evaluate`` and the run it returns.

``tooldisc eval`` and :func:`evaluate` share every step: inputs load through
:mod:`tooldisc.evaluation.inputs`, discovery runs through the one chokepoint
(:func:`~tooldisc.evaluation.run.run_discovery`), measures come from the metrics
package, and the per-query table and the eval document are read from the same
scores. A notebook therefore sees exactly the numbers the command prints.

Example::

    import tooldisc
    a = tooldisc.evaluate("catalog.yaml", "gold.json")                   # shipped weights
    b = tooldisc.evaluate("catalog.yaml", "gold.json", config="configs/bm25.yaml")
    a.metrics["MRR"], b.metrics["MRR"]
    tooldisc.compare(a, b).changed            # polars: the queries whose offer moved
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from tooldisc.errors import UsageError
from tooldisc.evaluation.inputs import PathLike, RunInputs, load_run_inputs
from tooldisc.evaluation.run import RunResult, Scores

if TYPE_CHECKING:
    import polars as pl

    from tooldisc.discovery.catalog import Catalog
    from tooldisc.discovery.config import RankerConfig
    from tooldisc.discovery.learned import Learned
    from tooldisc.discovery.model import Context
    from tooldisc.discovery.pipeline import Discoverer
    from tooldisc.gold.model import GoldSet


@dataclass(frozen=True, eq=False)
class EvalRun:
    """One evaluation of discovery over a gold set.

    ``result`` holds the offers, ``scores`` every eval measure per query and in total,
    :attr:`per_query` the same as a polars table (schema
    :data:`~tooldisc.evaluation.per_query.PER_QUERY_SCHEMA`, one row per gold query,
    no-match queries included). ``notes`` are the input notes and warnings a person
    should read (catalog notes, quarantined tools, gold-set warnings).
    """

    result: RunResult
    scores: Scores
    timings: bool = False
    notes: tuple[str, ...] = ()

    @cached_property
    def per_query(self) -> pl.DataFrame:
        """One row per gold query (built on first use, so a run that never asks skips polars)."""
        from tooldisc.evaluation.per_query import per_query_frame

        return per_query_frame(self.result, self.scores, timings=self.timings)

    @property
    def gold(self) -> GoldSet:
        return self.result.gold

    @property
    def catalog(self) -> Catalog:
        return self.result.catalog

    @property
    def config(self) -> RankerConfig:
        return self.result.config

    @property
    def context(self) -> Context:
        return self.result.context

    @property
    def k(self) -> int | str:
        return self.result.k

    @property
    def cutoff(self) -> int:
        return self.result.cutoff

    @property
    def metrics(self) -> dict[str, float | None]:
        """Measure name → total, as in ``tooldisc eval --format json`` (unmeasurable: ``None``)."""
        from tooldisc.evaluation.summary import metrics_dict

        return metrics_dict(self.scores.totals)

    def document(self, *, by: Sequence[str] | None = None, max_misses: int = 10) -> dict[str, Any]:
        """The eval document ``tooldisc eval --format json`` prints for this run.

        ``by``: slice fields (any string, boolean or small-integer label of the gold
        queries); ``None`` slices by the usual label fields that some query carries.
        """
        from tooldisc.evaluation.summary import eval_document

        return eval_document(self.result, by=by, timings=self.timings, max_misses=max_misses, scores=self.scores)


def check_k(k: object) -> int | str | None:
    """``k`` as discovery takes it: a positive int, ``"auto"``, or ``None`` (the config's K)."""
    if k is None or k == "auto":
        return k  # type: ignore[return-value]
    from tooldisc.limits import K_REQUEST
    from tooldisc.params import checked

    return checked(K_REQUEST, k, "k", UsageError)


def discover_gold(inputs: RunInputs, k: int | str | None = None, *, engine: Discoverer | None = None,
                  progress: Callable[[int], None] | None = None) -> RunResult:
    """Offers for every gold query of ``inputs`` at ``k`` (``None``: the config's K).

    ``engine`` reuses a Discoverer built over ``inputs.catalog``, ``inputs.config`` and
    ``inputs.learned``.
    """
    from tooldisc.discovery.pipeline import Discoverer
    from tooldisc.evaluation.run import run_discovery

    kk = check_k(k)
    engine = engine if engine is not None else Discoverer(inputs.catalog, inputs.config, learned=inputs.learned)
    return run_discovery(engine, inputs.gold, inputs.context, engine.config.k if kk is None else kk,
                         progress=progress)


def score_eval(result: RunResult, *, timings: bool = False, notes: tuple[str, ...] = ()) -> EvalRun:
    """Score a run with the eval measures and build its per-query table."""
    from tooldisc.evaluation.run import eval_measures, score_run

    scores = score_run(result, eval_measures(result.cutoff), timings=timings)
    return EvalRun(result, scores, timings, notes)


def evaluate(catalog: PathLike | Catalog | None, gold: PathLike | GoldSet | None,
             config: PathLike | RankerConfig | None = None, k: int | str | None = None,
             learned: PathLike | Learned | None = None,
             *, context: Context | Mapping[str, Any] | None = None, timings: bool = False,
             run: PathLike | None = None) -> EvalRun:
    """Run discovery over a gold set and score it, as ``tooldisc eval`` does.

    ``catalog``, ``gold`` and ``config`` are paths or loaded objects; ``None`` means the
    shipped catalog, gold set or weights. ``k`` is a positive int or ``"auto"``;
    ``None`` takes the config's K (15 in the shipped config), as the command line
    does. ``context`` is a :class:`~tooldisc.Context`, a mapping of the context flags
    (``tenant``, ``roles``, ``permissions``, ``mode``, ``forced``, ``context_file``), or
    ``None`` for the catalog default (every role and permission, tenant ``default``,
    mode autonomous). ``timings`` adds latency p50/p95 (then the result is no longer
    reproducible to the byte). ``learned`` is a learned file from ``tooldisc learn``
    (a path or :func:`tooldisc.load_learned`'s result), or ``None``; it ranks and may
    abstain, never authorizes.

    ``run`` scores a TREC run file (any retriever's, or an earlier ``--run-out``)
    instead of running discovery: the same gold set, measures and K (each query's
    ranking cut at K; ``config`` only supplies K when ``k`` is None), with the
    catalog's policy for ``forbidden@K`` (a tool the catalog lacks counts as
    forbidden); what the file lacks or adds is in ``notes``. Pass it to
    :func:`tooldisc.compare` beside discovery's runs.

    Bad input raises :class:`~tooldisc.errors.DataError`, :class:`ConfigError` or
    :class:`UsageError` (all ``ValueError``), naming the file and the place.
    """
    check_k(k)
    if run is not None:
        if learned is not None or timings:
            raise UsageError("a run file's offers were made elsewhere: 'learned' and 'timings' do not apply to it")
        from tooldisc.evaluation.run_file import load_run_file

        inputs = load_run_inputs(catalog, gold, config, context=context)
        result = load_run_file(run, inputs, inputs.config.k if k is None else k)
        notes = (*inputs.notes, *(result.run_file.notes if result.run_file else ()))
        return score_eval(result, notes=notes)
    inputs = load_run_inputs(catalog, gold, config, context=context, learned=learned)
    return score_eval(discover_gold(inputs, k), timings=timings, notes=inputs.notes)
