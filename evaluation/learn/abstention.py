"""The abstention part of ``tooldisc learn``, and the default abstention model tooldisc ships.

P(no authorized tool fits) is a logistic regression over offer features
(:mod:`tooldisc.discovery.learned.features`) — never the ranking weights — fitted on
matched and no-tool requests. The threshold puts out-of-fold false abstention at the
target: for a learned file the interpolated (1 − target) quantile of the matched
requests' probabilities, for the shipped default the lowest threshold at or under the
target on each of its datasets. Either way the no-match success it buys is paid for
with a stated, measured false-abstention rate.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from tooldisc.discovery.learned import Abstention, LinearModel

if TYPE_CHECKING:
    from tooldisc.discovery.config import AbstainSection
    from tooldisc.evaluation.learn.options import LearnOptions, Rows

def judge_abstention(rows: list[Rows], opts: LearnOptions, abstain: AbstainSection | None = None
                     ) -> tuple[Abstention | None, dict[str, Any]]:
    """Held-out correctness (abstain exactly when no tool fits) against discovery without the part.

    That is the shipped default model under ``abstain.model: true`` (or no ``abstain``),
    else the config's floors (best raw BM25F and content-word n-gram cosine both below).
    Each request counts as many times as it stands for in the log (:attr:`Rows.weight`):
    matched requests are sampled and no-tool ones are not, and unweighted the judge
    would see five times MetaTool's real share of no-tool requests and keep an
    abstention part that, on the log's own mix, loses more matched requests than it
    saves no-tool ones. The model is fitted with the same weights.
    """
    from tooldisc.discovery.learned.features import ABSTENTION_FEATURES_ORDER
    from tooldisc.discovery.learned.read import default_abstention
    from tooldisc.evaluation.learn.ranking import verdict_of
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
    w = np.array([r.weight for r in usable], dtype=np.float64)
    w /= w.mean()
    if abstain is None or abstain.model:
        default = default_abstention()
        dx = x[:, [ABSTENTION_FEATURES_ORDER.index(n) for n in default.model.features]]
        base_abstain = default.model.probability(dx) >= default.threshold
    else:
        base_abstain = floors_abstain(x, abstain)
    learned_abstain = np.zeros(len(y), dtype=bool)
    for f in range(opts.folds):
        tr, te = folds != f, folds == f
        model, threshold = fit_abstention(x[tr], y[tr], opts, weights=w[tr])
        learned_abstain[te] = model.probability(x[te]) >= threshold
    correct_base = (base_abstain == y) * w
    correct_learned = (learned_abstain == y) * w
    keep, verdict = verdict_of(paired_test(correct_base, correct_learned), opts.alpha)
    info.update(verdict)
    info.update({"measure": "abstained exactly when no tool fits",
                 "held_out": {"no_match_success": round(float(learned_abstain[y].mean()), 4),
                              "false_abstention": round(float(learned_abstain[~y].mean()), 4)},
                 "baseline": {"no_match_success": round(float(base_abstain[y].mean()), 4),
                                   "false_abstention": round(float(base_abstain[~y].mean()), 4)}})
    if not keep:
        return None, info
    model, threshold = fit_abstention(x, y, opts, weights=w)
    return Abstention(model, threshold, opts.target_false_abstention), info


def floors_abstain(x: np.ndarray, abstain: AbstainSection) -> np.ndarray:
    """Where the config's floors abstain (DESIGN §5 no-match), from offer-feature rows."""
    from tooldisc.discovery.learned.features import ABSTENTION_FEATURES_ORDER

    if abstain.min_bm25 <= 0 and abstain.min_ngram <= 0:
        return np.zeros(len(x), dtype=bool)
    bm25 = np.expm1(x[:, ABSTENTION_FEATURES_ORDER.index("bm25_top")])
    ngram = x[:, ABSTENTION_FEATURES_ORDER.index("ngram_content")]
    return (bm25 < abstain.min_bm25) & (ngram < abstain.min_ngram)


def fit_abstention(x: np.ndarray, y: np.ndarray, opts: LearnOptions,
                   groups: np.ndarray | None = None, interpolate: bool = True,
                   weights: np.ndarray | None = None) -> tuple[LinearModel, float]:
    """Logistic P(no tool fits) and the threshold keeping false abstention at the target out of fold.

    With ``groups`` (one dataset id per request) the target holds on *every* group.
    ``interpolate``: the threshold is the (1 − target) quantile of the matched requests'
    out-of-fold probabilities, interpolated between order statistics
    (:func:`quantile_threshold`); False keeps the count rule of :func:`threshold_for`
    (the shipped default's, so its file does not move). ``weights``: how many logged
    requests each row stands for (the fit's sample weights; the threshold reads only
    matched requests, all alike).
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold

    def fit(a: np.ndarray, b: np.ndarray, sw: np.ndarray | None) -> LinearModel:
        mean, scale = a.mean(axis=0), a.std(axis=0)
        scale[scale == 0] = 1.0
        m = LogisticRegression(C=1.0, max_iter=2000, random_state=opts.seed).fit((a - mean) / scale, b,
                                                                                   sample_weight=sw)
        coef = m.coef_[0] / scale
        from tooldisc.discovery.learned.features import ABSTENTION_FEATURES_ORDER

        return LinearModel(ABSTENTION_FEATURES_ORDER, coef, float(m.intercept_[0] - (coef * mean).sum()))

    oof = np.zeros(len(y))
    splits = min(opts.folds, int(y.sum()), int((~y).sum()))
    for tr, te in StratifiedKFold(max(splits, 2), shuffle=True, random_state=opts.seed).split(x, y):
        oof[te] = fit(x[tr], y[tr], None if weights is None else weights[tr]).probability(x[te])
    groups = np.zeros(len(y), dtype=np.int64) if groups is None else groups
    rule = quantile_threshold if interpolate else threshold_for
    threshold = max(rule(oof[~y & (groups == g)], opts.target_false_abstention) for g in np.unique(groups))
    return fit(x, y, weights), threshold


def threshold_for(matched_probability: np.ndarray, target: float) -> float:
    """The lowest threshold at which at most ``target`` of matched requests would abstain."""
    p = np.sort(matched_probability)[::-1]
    allowed = math.floor(target * len(p))
    if allowed >= len(p):
        return 0.0
    return float(min(np.nextafter(p[allowed], np.inf), 1.0))


def quantile_threshold(matched_probability: np.ndarray, target: float) -> float:
    """The (1 − target) quantile of matched requests' probabilities, interpolated between order statistics.

    Why not :func:`threshold_for`: when ``target × n`` is below 1 (0.005 on a couple of
    hundred matched requests) the count rule allows no abstention at all, so the single
    most tool-less-looking matched request sets the threshold, and one outlier (a
    follow-up such as "register it" logged without its earlier turns) switches
    abstention off. The interpolated quantile lies between the two highest values
    there, and equals the count rule's within one order statistic once ``target × n``
    is a few requests.
    """
    if not len(matched_probability):
        return 0.0
    q = float(np.quantile(np.asarray(matched_probability, dtype=np.float64), 1.0 - target))
    return float(min(np.nextafter(q, np.inf), 1.0))




# --- the shipped default abstention model --------------------------------------------


def fit_default_abstention(target: float = 0.01, seed: int = 0) -> dict[str, Any]:
    """Fit the abstention model that ships with tooldisc on its own gold sets only.

    Both shipped sets (the business set and the devops set), each against its own
    catalog, with the default ranker; requests whose earlier turns match a tool are
    left out (abstention is ruled out for them). The threshold keeps held-out false
    abstention at or under ``target`` on each set (docs/ranking.md's rule for floors). Returns the document ``discovery/data/abstention.json``
    holds; rerunning gives the same bytes.
    """
    from tooldisc.discovery.catalog.io import load_catalog, shipped_datasets
    from tooldisc.discovery.pipeline import Discoverer
    from tooldisc.evaluation.learn.rows import ranking_rows
    from tooldisc.gold.loader import load_gold

    xs, ys, groups, names = [], [], [], []
    for g, (cat_path, gold_path) in enumerate(shipped_datasets()):
        catalog = load_catalog(cat_path)
        engine = Discoverer(catalog)
        for q in load_gold(gold_path).queries:
            history = tuple(c for r, c in q.history if r == "user")
            _, _, _, offer, hit = ranking_rows(engine.index, q.query, history, 1)
            if not hit:
                xs.append(offer)
                ys.append(not q.matched)
                groups.append(g)
        names.append(f"{cat_path.parent.name}/{gold_path.name}")
    from tooldisc.evaluation.learn.options import LearnOptions

    opts = LearnOptions(target_false_abstention=target, seed=seed)
    model, threshold = fit_abstention(np.stack(xs), np.array(ys, dtype=bool), opts, np.array(groups),
                                      interpolate=False)
    doc = Abstention(model, threshold, target).to_dict()
    doc["fitted_on"] = {"gold_sets": names, "requests": len(ys), "no_tool": int(sum(ys))}
    return doc
