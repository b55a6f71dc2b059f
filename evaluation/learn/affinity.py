"""Phrase weights for ``tooldisc learn``: which of a tool's kept phrases tell it apart from the others.

Expansions say which phrases a tool's requests share; they cannot say which of those
phrases *distinguish* it ("weather" is shared by the weather tool and the travel tool).
A linear SVM, one tool against the rest (scikit-learn's ``LinearSVC``), learns that over
the requests' phrases, restricted to the k-anonymous phrase vocabulary the expansions
kept. Each tool keeps only positive weights on its *own* kept phrases (at most
``MAX_WEIGHTS``), so the file stores nothing the expansions do not already hold beside
a number per phrase.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from tooldisc.evaluation.learn.data import Example

MAX_WEIGHTS = 64  # per tool; more kept on MetaTool's training folds changed nothing
# Requests per tool the SVM sees: a bound on its cost for very large logs, not a balance. Capped
# at 60 on MetaTool's training folds (about 80 per tool) it lost held-out nDCG@10 (0.8615 → 0.8570,
# p 0.001); class-balanced weights instead of a cap were worse too (0.8595).
PER_TOOL = 1000
SVM_C = 0.5


def fit_affinity(examples: Sequence[Example], found: Sequence[set[str]], indices: Sequence[int],
                 phrases: Mapping[str, Sequence[tuple[str, int]]], seed: int) -> dict[str, dict[str, float]]:
    """Tool → {own phrase: positive weight}, from the requests at ``indices`` (matched ones)."""
    from scipy import sparse
    from sklearn.preprocessing import normalize
    from sklearn.svm import LinearSVC

    vocab: dict[str, int] = {}
    for tool in sorted(phrases):
        for p, _ in phrases[tool]:
            vocab.setdefault(p, len(vocab))
    labels = sorted(phrases)
    label_of = {t: i for i, t in enumerate(labels)}
    by_tool: dict[int, list[int]] = {}
    for i in indices:
        for t in examples[i].relevant:
            if t in label_of:
                by_tool.setdefault(label_of[t], []).append(i)
    if len(by_tool) < 2 or not vocab:
        return {}
    rng = np.random.default_rng(seed)
    rows, cols, y = [], [], []
    for label in sorted(by_tool):
        members = by_tool[label]
        if len(members) > PER_TOOL:
            members = sorted(rng.choice(members, size=PER_TOOL, replace=False).tolist())
        for i in members:
            found_ids = sorted({vocab[p] for p in found[i] if p in vocab})
            rows.extend([len(y)] * len(found_ids))
            cols.extend(found_ids)
            y.append(label)
    x = normalize(sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(y), len(vocab))))
    svm = LinearSVC(C=SVM_C, random_state=seed).fit(x, np.asarray(y))
    coef = svm.coef_ if len(svm.classes_) > 2 else np.vstack([-svm.coef_[0], svm.coef_[0]])
    out: dict[str, dict[str, float]] = {}
    for row, label in zip(coef, svm.classes_.tolist(), strict=True):
        tool = labels[label]
        own = [(p, float(row[vocab[p]])) for p, _ in phrases[tool]]
        own = sorted((pw for pw in own if pw[1] > 0), key=lambda pw: (-pw[1], pw[0]))[:MAX_WEIGHTS]
        if own:
            out[tool] = dict(own)
    return out
