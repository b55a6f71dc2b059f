"""``tooldisc learn``: fit a learned file from labelled traffic, proving each part on held-out folds.

Every learned part is fitted by *cross-fitting*: the examples are split into seeded
folds, and each fold's features are computed with expansions learned from the other
folds only, so no request ever scores against phrases it contributed itself. Each
part is then judged on held-out folds against what discovery does without it, with
the paired randomization test ``tooldisc compare`` uses, and kept only when it wins
significantly (``alpha``); the report inside the file says what was kept and why.

- **expansions** (:mod:`.phrases`): k-anonymous phrases per tool; their feature weight
  (used when no ranker is kept) is chosen on the training folds.
- **ranker**: pairwise logistic regression over the ranking features, coefficients
  held non-negative so every feature keeps meaning "more relevant".
- **abstention**: logistic regression over offer features for P(no tool fits), with
  the threshold that keeps false abstention at or under the target on held-out folds.
- **mutation**: a narrowing-only check of the word lists' class (:mod:`.learn_mutation`).

scikit-learn is imported here only; the file stores coefficients that discovery
applies with numpy.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from tooldisc.discovery.learned import Abstention, Expansions, Learned, LinearModel

from tooldisc.errors import UsageError

if TYPE_CHECKING:
    from tooldisc.discovery.catalog import Catalog
    from tooldisc.discovery.config import RankerConfig
    from tooldisc.evaluation.learn_data import Example

Progress = Callable[[str, int, int], None]  # (stage, done, total)


@dataclass(frozen=True)
class LearnOptions:
    """What to learn and how; every number has a stated reason in docs/learning.md."""

    expansions: bool = True
    ranker: bool = True
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

    def __post_init__(self) -> None:
        checks = [("min_requests", self.min_requests, 2), ("max_phrases", self.max_phrases, 1),
                  ("folds", self.folds, 2), ("sample", self.sample, 10), ("candidates", self.candidates, 2)]
        for name, value, low in checks:
            if not isinstance(value, int) or isinstance(value, bool) or value < low:
                raise UsageError(f"The {name!r} parameter must be an int in the range [{low}, inf). Got {value!r} instead.")
        for name, value in (("target_false_abstention", self.target_false_abstention), ("alpha", self.alpha)):
            if not 0.0 < value < 1.0:
                raise UsageError(f"The {name!r} parameter must be a number in (0, 1). Got {value!r} instead.")


@dataclass
class _Rows:
    """Cross-fitted features of the examples one fold holds."""

    fold: int
    example: int
    names: np.ndarray  # candidate tool names
    x: np.ndarray  # candidates × ranking features (raw, unweighted)
    y: np.ndarray  # bool: a relevant tool
    offer: np.ndarray  # abstention features of the request
    history: bool  # an earlier turn matched a tool: abstention is ruled out
    no_tool: bool  # labelled: no tool fits


@dataclass
class _Fit:
    rows: list[_Rows] = field(default_factory=list)
    report: dict[str, Any] = field(default_factory=dict)


def learn(catalog: Catalog, examples: Sequence[Example], options: LearnOptions | None = None,
          config: RankerConfig | None = None, progress: Progress | None = None) -> Learned:
    """Fit every enabled part on ``examples`` and return the learned file (not yet written).

    The models are small: one BLAS thread fits them faster than a pool of threads
    contending with each other (three times faster on a busy two-core machine).
    """
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        return _learn(catalog, examples, options, config, progress)


def _learn(catalog: Catalog, examples: Sequence[Example], options: LearnOptions | None,
           config: RankerConfig | None, progress: Progress | None) -> Learned:
    from tooldisc.discovery.pipeline import Discoverer
    from tooldisc.evaluation.phrases import phrases

    opts = options or LearnOptions()
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
    found = [phrases(examples[i].query) if opts.expansions else set() for i in range(len(examples))]
    report: dict[str, Any] = {
        "requests": len(examples), "matched": len(matched), "no_tool": len(no_tool),
        "folds": opts.folds, "seed": opts.seed, "alpha": opts.alpha,
    }
    fit = _cross_fit(engine, examples, found, fold_of, matched, no_tool, opts, progress)
    expansions = ranker = abstention = mutation = None
    weight = 0.0
    if opts.expansions:
        expansions, weight, report["expansions"] = _judge_expansions(fit.rows, opts, engine, examples, found)
    if opts.ranker:
        ranker, report["ranker"] = _judge_ranker(fit.rows, opts, engine, weight if expansions else 0.0)
    if opts.abstention:
        abstention, report["abstention"] = _judge_abstention(fit.rows, opts)
    if opts.mutation:
        from tooldisc.evaluation.learn_mutation import fit_mutation

        mutation, report["mutation"] = fit_mutation(examples, engine.index.classifier, opts)
    return Learned(catalog.hash, expansions, ranker, abstention, mutation, report)


# --- cross-fitting -----------------------------------------------------------------


def _cross_fit(engine: Any, examples: Sequence[Example], found: list[set[str]], fold_of: np.ndarray,
               matched: list[int], no_tool: list[int], opts: LearnOptions, progress: Progress | None) -> _Fit:
    """Each fold's features with expansions learned from the other folds only."""
    from tooldisc.evaluation.learn_rows import ranking_rows

    rng = np.random.default_rng(opts.seed + 1)
    chosen = set(rng.choice(matched, size=min(opts.sample, len(matched)), replace=False).tolist()) | set(no_tool)
    total = len(chosen)
    done = 0
    fit = _Fit()
    for f in range(opts.folds):
        index = None
        if opts.expansions:
            train = [i for i in matched if fold_of[i] != f]
            index = _expansion_index(engine, _shared(examples, found, train, opts))
        for i in sorted(j for j in chosen if fold_of[j] == f):
            e = examples[i]
            names, x, offer, history = ranking_rows(engine.index, e.query, e.history, index, opts.candidates,
                                                   e.relevant)
            y = np.isin(names, np.asarray(e.relevant, dtype=object)) if e.relevant else np.zeros(len(names), bool)
            fit.rows.append(_Rows(f, i, names, x, y, offer, history, e.no_tool))
            done += 1
            if progress is not None:
                progress("features", done, total)
    return fit


def _shared(examples: Sequence[Example], found: list[set[str]], indices: Sequence[int],
            opts: LearnOptions) -> dict[str, tuple[tuple[str, int], ...]]:
    from tooldisc.evaluation.phrases import shared_phrases

    return shared_phrases(((examples[i].query, found[i], examples[i].relevant) for i in indices),
                          opts.min_requests, opts.max_phrases)


def _expansion_index(engine: Any, phrases: dict[str, tuple[tuple[str, int], ...]]) -> Any:
    from tooldisc.discovery.expansion_index import ExpansionIndex, expansion_texts

    ix = engine.index
    cfg = ix.config
    return ExpansionIndex.build(ix.catalog.tools, expansion_texts(phrases), ix.lexical, cfg.bm25.k1, cfg.bm25.b,
                                cfg.text.stem)


# --- judging each part -------------------------------------------------------------

RANK_DEPTH = 10


def _ndcg(rows: list[_Rows], weights: np.ndarray) -> np.ndarray:
    """Per-request nDCG@10 (binary gain) of ``x @ weights`` within each request's candidates."""
    out = np.zeros(len(rows))
    discount = 1.0 / np.log2(np.arange(2, RANK_DEPTH + 2))
    for r, row in enumerate(rows):
        n_rel = int(row.y.sum())
        if not n_rel:
            continue
        s = row.x @ weights
        order = np.lexsort((row.names, -s))
        order = order[s[order] > 0][:RANK_DEPTH]
        dcg = float((row.y[order] * discount[: len(order)]).sum())
        out[r] = dcg / float(discount[: min(n_rel, RANK_DEPTH)].sum())
    return out


def _base_weights(engine: Any, names: Sequence[str]) -> np.ndarray:
    return np.array([engine.config.weight(n) for n in names], dtype=np.float64)


def _verdict(test: Any, alpha: float) -> tuple[bool, dict[str, Any]]:
    keep = bool(test.delta > 0 and test.p_randomization < alpha)
    return keep, {"without": round(test.mean_a, 4), "with": round(test.mean_b, 4), "wins": test.wins,
                  "losses": test.losses, "p": round(test.p_randomization, 4), "kept": keep}


_EXPANSION_GRID = (0.5, 1.0, 2.0, 4.0, 8.0)


def _judge_expansions(rows: list[_Rows], opts: LearnOptions, engine: Any, examples: Sequence[Example],
                      found: list[set[str]]) -> tuple[Expansions | None, float, dict[str, Any]]:
    """Held-out nDCG@10 with the expansion feature (weight chosen on the other folds) against without."""
    from tooldisc.discovery.learned_features import ranking_feature_names
    from tooldisc.evaluation.significance import paired_test

    names = ranking_feature_names(engine.index, True)
    ranked = [r for r in rows if r.y.any()]
    j = names.index("expansion")
    base = _base_weights(engine, names)
    base[j] = 0.0
    without = np.zeros(len(ranked))
    with_ = np.zeros(len(ranked))
    chosen = []
    for f in range(opts.folds):
        train = [r for r in ranked if r.fold != f]
        test_idx = [k for k, r in enumerate(ranked) if r.fold == f]
        test = [ranked[k] for k in test_idx]
        w = _best_expansion_weight(train, base, j)
        chosen.append(w)
        trial = base.copy()
        trial[j] = w
        without[test_idx] = _ndcg(test, base)
        with_[test_idx] = _ndcg(test, trial)
    keep, info = _verdict(paired_test(without, with_), opts.alpha)
    weight = _best_expansion_weight(ranked, base, j)
    matched = [i for i, e in enumerate(examples) if not e.no_tool]
    phrases = _shared(examples, found, matched, opts)
    info.update({"measure": "nDCG@10", "weight": weight, "fold_weights": chosen,
                 "tools_with_expansions": len(phrases), "phrases": sum(len(p) for p in phrases.values()),
                 "min_requests": opts.min_requests, "max_phrases": opts.max_phrases})
    if not keep:
        return None, 0.0, info
    hashes = {t.name: t.definition_hash for t in engine.catalog.tools}
    tools = {name: (hashes[name], ps) for name, ps in phrases.items()}
    return Expansions(opts.min_requests, opts.max_phrases, tools, weight), weight, info


def _best_expansion_weight(rows: list[_Rows], base: np.ndarray, j: int) -> float:
    best, best_w = -1.0, _EXPANSION_GRID[0]
    for w in _EXPANSION_GRID:
        trial = base.copy()
        trial[j] = w
        score = float(_ndcg(rows, trial).mean()) if rows else 0.0
        if score > best + 1e-12:
            best, best_w = score, w
    return best_w


def _pairs(rows: list[_Rows], seed: int, per_positive: int = 20) -> tuple[np.ndarray, np.ndarray]:
    """Feature differences (relevant − other candidate of the same request), both signs.

    Each relevant tool is paired with at most ``per_positive`` other candidates, the
    best-scored by the default ranking first, so one long candidate list cannot
    outweigh the rest.
    """
    rng = np.random.default_rng(seed)
    diffs = []
    for r in rows:
        neg = np.flatnonzero(~r.y)
        if len(neg) > per_positive:
            neg = rng.choice(neg, size=per_positive, replace=False)
        for p in np.flatnonzero(r.y):
            diffs.append(r.x[p] - r.x[neg])
    d = np.concatenate(diffs) if diffs else np.zeros((0, rows[0].x.shape[1] if rows else 0))
    return np.concatenate([d, -d]), np.r_[np.ones(len(d)), np.zeros(len(d))]


def _fit_ranker(rows: list[_Rows], seed: int) -> np.ndarray:
    """Pairwise logistic regression (RankNet's loss) on feature differences, coefficients ≥ 0.

    A pair's label says which candidate is relevant; no intercept, since a ranking
    only compares. A feature whose coefficient comes out negative is dropped and the
    rest refitted, so every kept weight still means "more of this feature, more
    relevant" and the pipeline's rule "ranked only when a relevance feature is
    positive" keeps its meaning.
    """
    from sklearn.linear_model import LogisticRegression

    x, y = _pairs(rows, seed)
    active = np.ones(x.shape[1], dtype=bool)
    coef = np.zeros(x.shape[1])
    while active.any():
        model = LogisticRegression(C=1.0, max_iter=2000, fit_intercept=False, random_state=seed).fit(x[:, active], y)
        c = model.coef_[0]
        if (c >= 0).all():
            coef[active] = c
            break
        active[np.flatnonzero(active)[c < 0]] = False
    top = coef.max(initial=0.0)
    return coef / top if top > 0 else coef  # scale only: a ranking is unchanged by a positive factor


def _judge_ranker(rows: list[_Rows], opts: LearnOptions, engine: Any,
                  expansion_weight: float) -> tuple[LinearModel | None, dict[str, Any]]:
    from tooldisc.discovery.learned_features import ranking_feature_names
    from tooldisc.evaluation.significance import paired_test

    names = ranking_feature_names(engine.index, opts.expansions)
    ranked = [r for r in rows if r.y.any()]
    base = _base_weights(engine, names)
    if "expansion" in names:
        base[names.index("expansion")] = expansion_weight
    without = _ndcg(ranked, base)
    with_ = np.zeros(len(ranked))
    for f in range(opts.folds):
        test_idx = [k for k, r in enumerate(ranked) if r.fold == f]
        coef = _fit_ranker([r for r in ranked if r.fold != f], opts.seed)
        with_[test_idx] = _ndcg([ranked[k] for k in test_idx], coef)
    keep, info = _verdict(paired_test(without, with_), opts.alpha)
    coef = _fit_ranker(ranked, opts.seed)
    info.update({"measure": "nDCG@10", "features": list(names), "coef": [round(float(c), 6) for c in coef]})
    return (LinearModel(tuple(names), coef, 0.0) if keep else None), info


def _judge_abstention(rows: list[_Rows], opts: LearnOptions) -> tuple[Abstention | None, dict[str, Any]]:
    """Held-out correctness (abstain exactly when no tool fits) against the shipped default model."""
    from tooldisc.discovery.learned import default_abstention
    from tooldisc.discovery.learned_features import ABSTENTION_FEATURES_ORDER
    from tooldisc.evaluation.significance import paired_test

    usable = [r for r in rows if not r.history]
    y = np.array([r.no_tool for r in usable], dtype=bool)
    n_no, n_yes = int(y.sum()), int((~y).sum())
    info: dict[str, Any] = {"no_tool": n_no, "matched": n_yes, "target_false_abstention": opts.target_false_abstention}
    if n_no < opts.folds or n_yes < opts.folds:
        info.update({"kept": False, "reason": f"needs at least {opts.folds} no-tool and matched requests"})
        return None, info
    x = np.stack([r.offer for r in usable])
    folds = np.array([r.fold for r in usable])
    default = default_abstention()
    dx = x[:, [ABSTENTION_FEATURES_ORDER.index(n) for n in default.model.features]]
    base_abstain = default.model.probability(dx) >= default.threshold
    learned_abstain = np.zeros(len(y), dtype=bool)
    for f in range(opts.folds):
        tr, te = folds != f, folds == f
        model, threshold = _fit_abstention(x[tr], y[tr], opts)
        learned_abstain[te] = model.probability(x[te]) >= threshold
    correct_base = (base_abstain == y).astype(float)
    correct_learned = (learned_abstain == y).astype(float)
    keep, verdict = _verdict(paired_test(correct_base, correct_learned), opts.alpha)
    info.update(verdict)
    info.update({"measure": "abstained exactly when no tool fits",
                 "held_out": {"no_match_success": round(float(learned_abstain[y].mean()), 4),
                              "false_abstention": round(float(learned_abstain[~y].mean()), 4)},
                 "default_model": {"no_match_success": round(float(base_abstain[y].mean()), 4),
                                   "false_abstention": round(float(base_abstain[~y].mean()), 4)}})
    if not keep:
        return None, info
    model, threshold = _fit_abstention(x, y, opts)
    return Abstention(model, threshold, opts.target_false_abstention), info


def _fit_abstention(x: np.ndarray, y: np.ndarray, opts: LearnOptions,
                    groups: np.ndarray | None = None) -> tuple[LinearModel, float]:
    """Logistic P(no tool fits) and the lowest threshold keeping false abstention ≤ target out of fold.

    With ``groups`` (one dataset id per request) the target holds on *every* group.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold

    def fit(a: np.ndarray, b: np.ndarray) -> LinearModel:
        mean, scale = a.mean(axis=0), a.std(axis=0)
        scale[scale == 0] = 1.0
        m = LogisticRegression(C=1.0, max_iter=2000, random_state=opts.seed).fit((a - mean) / scale, b)
        coef = m.coef_[0] / scale
        from tooldisc.discovery.learned_features import ABSTENTION_FEATURES_ORDER

        return LinearModel(ABSTENTION_FEATURES_ORDER, coef, float(m.intercept_[0] - (coef * mean).sum()))

    oof = np.zeros(len(y))
    splits = min(opts.folds, int(y.sum()), int((~y).sum()))
    for tr, te in StratifiedKFold(max(splits, 2), shuffle=True, random_state=opts.seed).split(x, y):
        oof[te] = fit(x[tr], y[tr]).probability(x[te])
    groups = np.zeros(len(y), dtype=np.int64) if groups is None else groups
    threshold = max(threshold_for(oof[~y & (groups == g)], opts.target_false_abstention) for g in np.unique(groups))
    return fit(x, y), threshold


def threshold_for(matched_probability: np.ndarray, target: float) -> float:
    """The lowest threshold at which at most ``target`` of matched requests would abstain."""
    p = np.sort(matched_probability)[::-1]
    allowed = math.floor(target * len(p))
    if allowed >= len(p):
        return 0.0
    return float(min(np.nextafter(p[allowed], np.inf), 1.0))


# --- the shipped default abstention model --------------------------------------------


def fit_default_abstention(target: float = 0.01, seed: int = 0) -> dict[str, Any]:
    """Fit the abstention model that ships with tooldisc on its own gold sets only.

    Both shipped sets (the business set and the devops set), each against its own
    catalog, with the default ranker; requests whose earlier turns match a tool are
    left out (abstention is ruled out for them). The threshold keeps held-out false
    abstention at or under ``target`` on each set (docs/ranking.md's rule for floors). Returns the document ``discovery/data/abstention.json``
    holds; rerunning gives the same bytes.
    """
    from tooldisc.discovery.catalog_io import load_catalog, shipped_datasets
    from tooldisc.discovery.pipeline import Discoverer
    from tooldisc.evaluation.learn_rows import ranking_rows
    from tooldisc.gold.loader import load_gold

    xs, ys, groups, names = [], [], [], []
    for g, (cat_path, gold_path) in enumerate(shipped_datasets()):
        catalog = load_catalog(cat_path)
        engine = Discoverer(catalog)
        for q in load_gold(gold_path).queries:
            history = tuple(c for r, c in q.history if r == "user")
            _, _, offer, hit = ranking_rows(engine.index, q.query, history, None, 1)
            if not hit:
                xs.append(offer)
                ys.append(not q.matched)
                groups.append(g)
        names.append(f"{cat_path.parent.name}/{gold_path.name}")
    opts = LearnOptions(target_false_abstention=target, seed=seed)
    model, threshold = _fit_abstention(np.stack(xs), np.array(ys, dtype=bool), opts, np.array(groups))
    doc = Abstention(model, threshold, target).to_dict()
    doc["fitted_on"] = {"gold_sets": names, "requests": len(ys), "no_tool": int(sum(ys))}
    return doc
