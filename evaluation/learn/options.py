"""What ``tooldisc learn`` is asked to do (:class:`LearnOptions`) and the rows its parts share (:class:`Rows`).

Kept apart from the orchestrator (:mod:`.fit`) so the parts (:mod:`.ranking`,
:mod:`.abstention`, :mod:`.clauses`, :mod:`.mutation`) import these records without
importing the module that calls them: no import circle.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from tooldisc.errors import UsageError
from tooldisc.limits import COUNTS
from tooldisc.params import Constraint, Interval, validate


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
