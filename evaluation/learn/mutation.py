"""The mutation part of ``tooldisc learn``: when to distrust the word lists' class, narrowing only.

The word lists (``discovery/data/mutation.yaml``) decide the query's mutation class,
which decides what the §4 filter authorizes. A learned model may make that class
*narrower* (fall back to READ) but never wider or different, so it can only remove
tools from an offer: it is a binary model of "does the request mean the class the
word lists found?", over the request's terms and the class itself.

It is fitted on requests whose file labels an intent, and judged by nested
cross-validation: how often the class is *wider* than the labelled intent (allows a
tool the intent does not) and how often *narrower* (does not allow a tool the
intent needs), before and after. It is kept only if it lowers the first without
raising the second.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from tooldisc.discovery.learned import MUTATION_CLASSES, MutationModel, narrows

if TYPE_CHECKING:
    from tooldisc.discovery.mutation import MutationClassifier
    from tooldisc.evaluation.learn.data import Example
    from tooldisc.evaluation.learn.options import LearnOptions

INTENT_CLASS = {"read": "READ", "none": "READ", "write": "WRITE", "delete": "DESTRUCTIVE",
                "export": "EXPORT", "execute": "EXECUTE"}
MIN_EXAMPLES = 20  # requests the word lists give a mutation class, below which nothing is fitted


def model_terms(query: str) -> set[str]:
    """The stems a mutation model reads (the same terms discovery matches on)."""
    from tooldisc.discovery.text.fields import terms

    return set(terms(query))


def _wider_narrower(predicted: Sequence[str], labelled: Sequence[str]) -> tuple[int, int]:
    wider = sum(p != "READ" and p != lab for p, lab in zip(predicted, labelled, strict=True))
    narrower = sum(lab != "READ" and p != lab for p, lab in zip(predicted, labelled, strict=True))
    return wider, narrower


def fit_mutation(examples: Sequence[Example], classifier: MutationClassifier,
                 opts: LearnOptions) -> tuple[MutationModel | None, dict[str, Any]]:
    """Fit and judge the narrowing model; None (with the reason) when it is not kept."""
    labelled = [e for e in examples if e.intent is not None]
    rules = [_rule(classifier, e.query) for e in labelled]
    truth = [INTENT_CLASS[e.intent] for e in labelled]  # type: ignore[index]
    wider, narrower = _wider_narrower(rules, truth)
    info: dict[str, Any] = {"labelled": len(labelled), "before": {"wider": wider, "narrower": narrower}}
    rows = [i for i, r in enumerate(rules) if r != "READ"]
    y = np.array([rules[i] == truth[i] for i in rows], dtype=bool)
    if len(rows) < MIN_EXAMPLES or y.all() or not y.any():
        info.update({"kept": False, "reason": f"needs at least {MIN_EXAMPLES} labelled requests the word lists "
                                              "give a mutation class, with both outcomes"})
        return None, info
    terms = [model_terms(labelled[i].query) for i in rows]
    row_rules = [rules[i] for i in rows]
    folds = np.arange(len(rows)) % opts.folds
    np.random.default_rng(opts.seed).shuffle(folds)
    after = list(rules)
    for f in range(opts.folds):
        train = np.flatnonzero(folds != f)
        if y[train].all() or not y[train].any():
            continue
        model = _fit([terms[i] for i in train], [row_rules[i] for i in train], y[train], opts)
        for i in np.flatnonzero(folds == f):
            if narrows(model, terms[i], row_rules[i]):
                after[rows[i]] = "READ"
    w2, n2 = _wider_narrower(after, truth)
    keep = w2 < wider and n2 <= narrower
    info.update({"after": {"wider": w2, "narrower": n2}, "kept": keep})
    if not keep:
        info["reason"] = "held out, it did not lower 'wider' without raising 'narrower'"
        return None, info
    return _fit(terms, row_rules, y, opts), info


def _rule(classifier: MutationClassifier, query: str) -> str:
    c = classifier.classify(query)
    return c if c in MUTATION_CLASSES else "READ"


def _fit(terms: list[set[str]], rules: list[str], y: np.ndarray, opts: LearnOptions) -> MutationModel:
    """Logistic regression over k-anonymous terms and the rule class; threshold from its own folds.

    The threshold is the highest at which no held-out request whose class was right is
    narrowed: narrowing a right class would make the request narrower than it means.
    """
    from scipy import sparse
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold

    df = Counter(t for ts in terms for t in ts)
    vocab = sorted(t for t, c in df.items() if c >= opts.min_requests)
    col = {t: j for j, t in enumerate(vocab)}
    rcol = {r: len(vocab) + j for j, r in enumerate(MUTATION_CLASSES)}

    def matrix(ts: list[set[str]], rs: list[str]) -> Any:
        r, c = [], []
        for i, (tt, rule) in enumerate(zip(ts, rs, strict=True)):
            cols = [col[t] for t in tt if t in col] + [rcol[rule]]
            r += [i] * len(cols)
            c += cols
        return sparse.csr_matrix((np.ones(len(r)), (r, c)), shape=(len(ts), len(vocab) + len(rcol)))

    def fit(ts: list[set[str]], rs: list[str], yy: np.ndarray) -> tuple[np.ndarray, float]:
        m = LogisticRegression(C=1.0, max_iter=2000, random_state=opts.seed).fit(matrix(ts, rs), yy)
        return m.coef_[0], float(m.intercept_[0])

    oof = np.ones(len(y))
    splits = min(opts.folds, int(y.sum()), int((~y).sum()))
    if splits >= 2:
        for tr, te in StratifiedKFold(splits, shuffle=True, random_state=opts.seed).split(terms, y):
            coef, b = fit([terms[i] for i in tr], [rules[i] for i in tr], y[tr])
            oof[te] = 1.0 / (1.0 + np.exp(-(matrix([terms[i] for i in te], [rules[i] for i in te]) @ coef + b)))
    right = oof[y]
    threshold = float(right.min(initial=1.0))  # narrowing happens strictly below every right request
    coef, b = fit(terms, rules, y)
    return MutationModel({t: float(coef[j]) for t, j in col.items()},
                         {r: float(coef[j]) for r, j in rcol.items()}, b, threshold)
