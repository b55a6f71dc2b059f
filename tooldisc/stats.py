"""Statistics shared by ``compare`` (evaluation) and the canary gates: the one Holm correction.

Base layer, so the canary need not reach into ``evaluation`` for it; ``tooldisc.evaluation.holm``
and ``tooldisc.evaluation.significance.holm`` stay importable (re-exported there).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values, in the input order.

    Step-down: sort ascending, multiply the i-th smallest by ``m - i``, enforce
    monotonicity with a running maximum, cap at 1. Equals statsmodels'
    ``multipletests(method="holm")[1]``; NaN inputs stay NaN and do not count in m.
    A test is rejected at family-wise level α when its adjusted p is ``<= α`` (the
    canary gates) or ``< α`` (``compare``'s verdicts, as before).
    """
    p = np.asarray(pvalues, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    m = ok.size
    if m == 0:
        return out.tolist()
    order = ok[np.argsort(p[ok], kind="stable")]
    adjusted = np.minimum(1.0, np.maximum.accumulate(p[order] * (m - np.arange(m))))
    out[order] = adjusted
    return out.tolist()
