"""``tooldisc bench``: latency, build time and memory of discovery at catalog sizes, against BM25 baselines.

The harness (one fresh interpreter per size) is :mod:`.run`, its options :mod:`.options`,
what each size's process measures :mod:`.measure`, the from-a-file figures
:mod:`.from_file`, and the synthetic catalogs and queries it measures on :mod:`.synthetic`.
Re-exports only, loaded on first use: the per-size processes import this package, and
what they import is what they measure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tooldisc.lazy import lazy_attributes

_LAZY = {
    "BenchOptions": "tooldisc.evaluation.bench.options",
    "run_bench": "tooldisc.evaluation.bench.run",
    "load_inputs": "tooldisc.evaluation.bench.run",
}

if TYPE_CHECKING:
    from tooldisc.evaluation.bench.options import BenchOptions
    from tooldisc.evaluation.bench.run import load_inputs, run_bench

__all__ = ["BenchOptions", "load_inputs", "run_bench"]


__getattr__ = lazy_attributes(__name__, _LAZY)
