"""``tooldisc learn``: fit a learned file from labelled traffic, proving each part on held-out folds.

Every learned part is fitted by *cross-fitting*: the examples are split into seeded
folds, and each fold's features are computed with expansions learned from the other
folds only, so no request ever scores against phrases it contributed itself. Each
part is then judged on held-out folds against what discovery does without it, with
the paired randomization test ``tooldisc compare`` uses, and kept only when it wins
significantly (``alpha``); the report inside the file says what was kept and why.

- **expansions** (:mod:`.phrases`): k-anonymous phrases per tool; their feature weight
  (used when no ranker is kept) is chosen on the training folds.
- **affinity** (:mod:`.learn_affinity`): a weight per kept phrase that says how much it
  sets its tool apart (a linear SVM); judged on top of the expansions.
- **ranker** (:mod:`.learn_ranking`): pairwise logistic regression over the ranking
  features, coefficients held non-negative so every feature keeps meaning "more relevant".
- **clauses** (:mod:`.learn_clauses`): the weight of per-clause ranking for requests
  that ask for several things at once, chosen and judged on held-out folds.
- **abstention** (:mod:`.learn_abstention`): logistic regression over offer features
  for P(no tool fits), with the threshold that keeps false abstention at or under the
  target on held-out folds.
- **mutation** (:mod:`.learn_mutation`): a narrowing-only check of the word lists' class.

scikit-learn is imported here only; the file stores coefficients that discovery
applies with numpy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from tooldisc.discovery.learned import Expansions, Learned, LinearModel
from tooldisc.errors import UsageError
from tooldisc.limits import COUNTS
from tooldisc.params import Constraint, Interval, validate

if TYPE_CHECKING:
    from tooldisc.discovery.catalog import Catalog
    from tooldisc.discovery.config import RankerConfig
    from tooldisc.evaluation.learn_data import Example

Progress = Callable[[str, int, int], None]  # (stage, done, total)


@dataclass(frozen=True)
class LearnOptions:
    """What to learn and how; every number has a stated reason in docs/learning.md."""

    expansions: bool = True
    affinity: bool = True  # phrase weights over the expansions' phrases (needs expansions)
    ranker: bool = True
    clauses: bool = True  # the clauses step's weight (discovery/clauses.py)
    abstention: bool = True
    mutation: bool = True
    min_requests: int = 3  # k: distinct requests that must share a phrase before it is stored
    max_phrases: int = 256  # per tool
    folds: int = 5
    target_false_abstention: float = 0.01
    sample: int = 3000  # matched requests whose candidate features are computed (spread over the folds)
    candidates: int = 50  # per request: the best by the current ranking, plus every relevant tool
    alpha: float = 0.05  # a part is kept when it wins at this significance on held-out folds
    seed: int = 0

    # Each checked option's rule (the rulebook, tooldisc.params); the switches are plain booleans.
    parameter_constraints: ClassVar[dict[str, Constraint]] = {
        "min_requests": COUNTS["min_requests"], "max_phrases": COUNTS["max_phrases"], "folds": COUNTS["folds"],
        "sample": COUNTS["sample"], "seed": COUNTS["seed"], "candidates": Interval(int, 2, 1000, strict=True),
        "target_false_abstention": Interval(float, 0, 1, closed="neither"),
        "alpha": Interval(float, 0, 1, closed="neither")}

    def __post_init__(self) -> None:
        validate(self.parameter_constraints, self, error=UsageError)


@dataclass
class Rows:
    """Cross-fitted features of the examples one fold holds."""

    fold: int
    example: int
    names: np.ndarray  # candidate tool names
    x: np.ndarray  # candidates × ranking features (raw, unweighted)
    y: np.ndarray  # bool: a relevant tool
    offer: np.ndarray  # abstention features of the request
    history: bool  # an earlier turn matched a tool: abstention is ruled out
    no_tool: bool  # labelled: no tool fits
    tie: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # name order: the tie-break
    # nDCG's graded gain per candidate (DESIGN §6): 2 relevant, 1 acceptable, 0 otherwise.
    gain: np.ndarray = field(default_factory=lambda: np.zeros(0))
    # How many logged requests this row stands for: matched requests are sampled (``sample``),
    # no-tool ones all kept, so a judge over both weighs rows back to the log's own mix.
    weight: float = 1.0

    def __post_init__(self) -> None:
        if len(self.tie) != len(self.names):
            self.tie = np.argsort(np.argsort(self.names.astype(str), kind="stable"))
        if len(self.gain) != len(self.names):
            self.gain = 2.0 * self.y


@dataclass
class _Fit:
    columns: list[str] = field(default_factory=list)  # names of the feature columns of every row's x
    rows: list[Rows] = field(default_factory=list)


def learn(catalog: Catalog, examples: Sequence[Example], options: LearnOptions | None = None,
          config: RankerConfig | None = None, progress: Progress | None = None) -> Learned:
    """Fit every enabled part on ``examples`` and return the learned file (not yet written).

    The models are small: one BLAS thread fits them faster than a pool of threads
    contending with each other (three times faster on a busy two-core machine).
    """
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        return _learn(catalog, examples, options or LearnOptions(), config, progress)


def _learn(catalog: Catalog, examples: Sequence[Example], opts: LearnOptions, config: RankerConfig | None,
           progress: Progress | None) -> Learned:
    """The parts in dependency order, the phrase-weight SVMs in one background thread.

    liblinear releases the GIL, so each SVM (the costliest fit) runs beside the Python
    work that does not need it: the clauses judge and earlier folds' features while a
    fold's fit runs, the ranker and abstention judges while the file's own fit runs.
    One thread, not more: liblinear draws from one process-wide random generator,
    so fits run one at a time, in a fixed order, and the file stays byte-stable.
    """
    from concurrent.futures import ThreadPoolExecutor

    from tooldisc.discovery.phrases import run_phrases
    from tooldisc.discovery.pipeline import Discoverer
    from tooldisc.evaluation.phrases import scrubbed
    from tooldisc.limits import check_query

    for i, e in enumerate(examples):  # the cap every surface applies (files are checked as they load)
        check_query(e.query, f"examples[{i}].query")
        for j, turn in enumerate(e.history):
            check_query(turn, f"examples[{i}].history[{j}]")
    matched = [i for i, e in enumerate(examples) if not e.no_tool]
    no_tool = [i for i, e in enumerate(examples) if e.no_tool]
    if not matched:
        raise UsageError("learn needs at least one request with a relevant tool")
    engine = Discoverer(catalog, config)
    rng = np.random.default_rng(opts.seed)
    fold_of = np.empty(len(examples), dtype=np.int64)
    for group in (matched, no_tool):
        perm = rng.permutation(len(group))
        fold_of[np.asarray(group, dtype=np.int64)[perm]] = np.arange(len(group)) % opts.folds
    # each request scrubbed once for every fold: its phrases, and its identity for k-anonymity
    said = [scrubbed(e.query) for e in examples] if opts.expansions else []
    found = [run_phrases([list(run) for run in said[i]]) if opts.expansions else set() for i in range(len(examples))]
    report: dict[str, Any] = {
        "requests": len(examples), "matched": len(matched), "no_tool": len(no_tool),
        "folds": opts.folds, "seed": opts.seed, "alpha": opts.alpha,
    }
    svm = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tooldisc-learn-svm")
    try:
        folds = _fold_phrases(engine, examples, found, said, fold_of, matched, opts, svm)
        clauses = None
        if opts.clauses:  # needs no fold's fit: done while the first fits run
            from tooldisc.evaluation.learn_clauses import judge_clauses

            clauses, clauses_info = judge_clauses(engine, examples, fold_of, matched, opts)
        fit = _cross_fit(engine, examples, folds, fold_of, matched, no_tool, opts, progress)
        expansions, weights, use = _ranking_parts(fit, engine, examples, found, said, matched, opts, report, svm)
        ranker = None
        if opts.ranker:
            from tooldisc.evaluation.learn_ranking import judge_ranker

            coef, report["ranker"] = judge_ranker(fit.rows, fit.columns, weights, use, opts)
            if coef is not None:
                chosen = [(_feature(c), float(w)) for c, w in zip(fit.columns, coef, strict=True) if c in use]
                ranker = LinearModel(tuple(n for n, _ in chosen), np.array([w for _, w in chosen]), 0.0)
        if opts.clauses:
            report["clauses"] = clauses_info
        abstention = mutation = None
        if opts.abstention:
            from tooldisc.evaluation.learn_abstention import judge_abstention

            abstention, report["abstention"] = judge_abstention(fit.rows, opts, engine.config.abstain)
        if opts.mutation:
            from tooldisc.evaluation.learn_mutation import fit_mutation

            mutation, report["mutation"] = fit_mutation(examples, engine.index.classifier, opts)
        return Learned(catalog.hash, expansions(), ranker, abstention, mutation, report, clauses=clauses)
    finally:
        svm.shutdown(wait=True, cancel_futures=True)  # on an error, fits not yet started are dropped


def _feature(column: str) -> str:
    """The ranking feature a column measures (``affinity@0.1`` is ``affinity``)."""
    return column.split("@", 1)[0]


def _ranking_parts(fit: _Fit, engine: Any, examples: Sequence[Example], found: list[set[str]],
                   said: list[Any], matched: list[int], opts: LearnOptions, report: dict[str, Any], svm: Executor
                   ) -> tuple[Callable[[], Expansions | None], dict[str, float], list[str]]:
    """Judge expansions, then phrase weights on top; the kept ones with their weights.

    Returns (a call giving the expansions part or None — when phrase weights are kept
    it waits for their fit on every request, submitted to ``svm`` so that the other
    judges run meanwhile; the weights discovery would use without a ranker; the
    columns a ranker may use).
    """
    from tooldisc.evaluation.learn_ranking import judge_added

    cfg = engine.config
    weights = {c: cfg.weight(c) for c in fit.columns if not c.startswith(("expansion", "affinity"))}
    use = list(weights)
    if not opts.expansions:
        return lambda: None, weights, use
    keep, _, w_exp, info = judge_added(fit.rows, fit.columns, weights, ["expansion"], opts)
    phrases = _shared(examples, found, said, matched, opts)
    info.update({"tools_with_expansions": len(phrases), "phrases": sum(len(p) for p in phrases.values()),
                 "min_requests": opts.min_requests, "max_phrases": opts.max_phrases})
    report["expansions"] = info
    if not keep:
        return lambda: None, weights, use
    weights, use = {**weights, "expansion": w_exp}, [*use, "expansion"]
    hashes = {t.name: t.definition_hash for t in engine.catalog.tools}
    tools = {name: (hashes[name], ps) for name, ps in phrases.items()}
    expansions = Expansions(opts.min_requests, opts.max_phrases, tools, w_exp)
    temps = [c for c in fit.columns if c.startswith("affinity@")]
    if not temps:
        return lambda: expansions, weights, use
    keep, column, w_aff, info = judge_added(fit.rows, fit.columns, weights, temps, opts)
    temperature = float(column.split("@", 1)[1])
    info["temperature"] = temperature
    report["affinity"] = info
    if not keep:
        return lambda: expansions, weights, use
    from tooldisc.evaluation.learn_affinity import fit_affinity

    affinity = svm.submit(fit_affinity, examples, found, matched, phrases, opts.seed)

    def kept() -> Expansions:
        return Expansions(opts.min_requests, opts.max_phrases, tools, w_exp, affinity.result(), w_aff, temperature)

    return kept, {**weights, column: w_aff}, [*use, column]


# --- cross-fitting -----------------------------------------------------------------


@dataclass(frozen=True)
class _Fold:
    """What fold ``f``'s features are computed with: phrases and phrase weights from the other folds."""

    phrases: dict[str, tuple[tuple[str, int], ...]]
    affinity: Future[dict[str, dict[str, float]]] | None  # the phrase-weight fit, running in the background


def _fold_phrases(engine: Any, examples: Sequence[Example], found: list[set[str]], said: list[Any],
                  fold_of: np.ndarray, matched: list[int], opts: LearnOptions, svm: Executor) -> list[_Fold]:
    """Each fold's training phrases, its phrase-weight fit submitted to ``svm`` as soon as they are known."""
    from tooldisc.evaluation.learn_affinity import fit_affinity

    out = []
    for f in range(opts.folds):
        if not opts.expansions:
            out.append(_Fold({}, None))
            continue
        train = [i for i in matched if fold_of[i] != f]
        phrases = _shared(examples, found, said, train, opts)
        weights = svm.submit(fit_affinity, examples, found, train, phrases, opts.seed) if opts.affinity else None
        out.append(_Fold(phrases, weights))
    return out


def _cross_fit(engine: Any, examples: Sequence[Example], folds: list[_Fold], fold_of: np.ndarray,
               matched: list[int], no_tool: list[int], opts: LearnOptions, progress: Progress | None) -> _Fit:
    """Each fold's features with expansions and phrase weights learned from the other folds only."""
    from tooldisc.discovery.expansion_index import AffinityIndex
    from tooldisc.evaluation.learn_ranking import TEMPERATURES
    from tooldisc.evaluation.learn_rows import ranking_rows

    rng = np.random.default_rng(opts.seed + 1)
    chosen = set(rng.choice(matched, size=min(opts.sample, len(matched)), replace=False).tolist()) | set(no_tool)
    matched_weight = len(matched) / min(opts.sample, len(matched))
    total = len(chosen)
    done = 0
    fit = _Fit()
    for f, fold in enumerate(folds):
        expansion = affinity = None
        if opts.expansions:
            expansion = _expansion_index(engine, fold.phrases)
            if fold.affinity is not None:
                weights = fold.affinity.result()
                affinity = AffinityIndex.build(engine.catalog.tools, weights, TEMPERATURES[0]) if weights else None
        for i in sorted(j for j in chosen if fold_of[j] == f):
            e = examples[i]
            columns, names, x, offer, history = ranking_rows(
                engine.index, e.query, e.history, opts.candidates, (*e.relevant, *e.acceptable),
                expansion=expansion, affinity=affinity, temperatures=TEMPERATURES)
            if affinity is None and opts.expansions and opts.affinity:  # keep every fold's columns alike
                columns = [*columns, *(f"affinity@{t:g}" for t in TEMPERATURES)]
                x = np.hstack([x, np.zeros((len(x), len(TEMPERATURES)))])
            fit.columns = fit.columns or columns
            y = np.isin(names, np.asarray(e.relevant, dtype=object)) if e.relevant else np.zeros(len(names), bool)
            gain = 2.0 * y + (np.isin(names, np.asarray(e.acceptable, dtype=object)) & ~y if e.acceptable else 0.0)
            fit.rows.append(Rows(f, i, names, x, y, offer, history, e.no_tool, gain=gain,
                                 weight=1.0 if e.no_tool else matched_weight))
            done += 1
            if progress is not None:
                progress("features", done, total)
    return fit


def _shared(examples: Sequence[Example], found: list[set[str]], said: list[Any], indices: Sequence[int],
            opts: LearnOptions) -> dict[str, tuple[tuple[str, int], ...]]:
    from tooldisc.evaluation.phrases import shared_phrases

    return shared_phrases(((said[i], found[i], examples[i].relevant) for i in indices),
                          opts.min_requests, opts.max_phrases)


def _expansion_index(engine: Any, phrases: dict[str, tuple[tuple[str, int], ...]]) -> Any:
    from tooldisc.discovery.expansion_index import ExpansionIndex, expansion_texts

    ix = engine.index
    cfg = ix.config
    return ExpansionIndex.build(ix.catalog.tools, expansion_texts(phrases), ix.lexical, cfg.bm25.k1, cfg.bm25.b,
                                cfg.text.stem)


def threshold_for(matched_probability: np.ndarray, target: float) -> float:
    """The lowest threshold at which at most ``target`` of matched requests would abstain."""
    from tooldisc.evaluation.learn_abstention import threshold_for as _threshold_for

    return _threshold_for(matched_probability, target)


def fit_default_abstention(target: float = 0.01, seed: int = 0) -> dict[str, Any]:
    """The document ``discovery/data/abstention.json`` holds (see :mod:`.learn_abstention`)."""
    from tooldisc.evaluation.learn_abstention import fit_default_abstention as _fit

    return _fit(target, seed)
