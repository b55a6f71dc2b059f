"""``tooldisc tune``: ranker weights chosen by k-fold cross-validation over gold sets.

The estimator and its search space are in :mod:`.tuner`; the JSON document and the
weights YAML of a tuning run in :mod:`.report`. Re-exports only: the names callers
imported from the former ``tooldisc.evaluation.tune`` module.
"""

from tooldisc.evaluation.tune.tuner import WeightTuner, load_space, parse_objective

__all__ = ["WeightTuner", "load_space", "parse_objective"]
