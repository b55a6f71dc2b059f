"""``tooldisc learn``: a learned file fitted from labelled traffic, each part proved on held-out folds.

The orchestrator is :mod:`.fit`; the records it and its parts share are in :mod:`.options`;
one module per learned part (:mod:`.phrases`, :mod:`.affinity`, :mod:`.ranking`,
:mod:`.clauses`, :mod:`.abstention`, :mod:`.mutation`), the labelled examples in
:mod:`.data` and their feature rows in :mod:`.rows`. Re-exports only: the names callers
imported from the former ``tooldisc.evaluation.learn`` module (docs/ranking.md).
"""

from tooldisc.evaluation.learn.fit import fit_default_abstention, learn, threshold_for
from tooldisc.evaluation.learn.options import LearnOptions, Rows

__all__ = ["LearnOptions", "Rows", "fit_default_abstention", "learn", "threshold_for"]
