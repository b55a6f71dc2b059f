"""What one ``tooldisc bench`` run measures (:class:`BenchOptions`).

Kept apart from the harness (:mod:`.run`) so the per-size measuring (:mod:`.measure`)
reads the options without importing the module that calls it: no import circle.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from tooldisc.errors import UsageError
from tooldisc.limits import COUNTS
from tooldisc.params import Constraint, Items, validate


@dataclass(frozen=True)
class BenchOptions:
    """One benchmark run. ``catalog``/``gold`` ``None`` mean the shipped files."""

    sizes: tuple[int, ...] = (180, 10_000, 100_000)
    queries: int = 200
    repeats: int = 5
    k: int = 15
    baselines: bool = True
    seed: int = 0
    catalog: str | None = None
    gold: str | None = None
    config: str | None = None
    learned: str | None = None  # a learned file for the base catalog; variants take their base tool's learned parts
    build_repeats: int = 3
    notes: tuple[str, ...] = field(default=())
    catalog_format: str | None = None  # None: declared by catalog_version, else detected
    backend: str = "auto"  # the query loops' form (tooldisc.discovery.kernels): auto, numpy or numba
    from_file: bool = True  # also measure the catalog written to a file (evaluation/bench/from_file.py)

    # Each counted option's rule (the rulebook, tooldisc.params); ``backend`` is checked against
    # the kernels' own list of backends.
    parameter_constraints: ClassVar[dict[str, Constraint]] = {
        "queries": COUNTS["bench_queries"], "repeats": COUNTS["repeats"], "k": COUNTS["k"],
        "build_repeats": COUNTS["repeats"], "seed": COUNTS["seed"], "sizes": Items(COUNTS["bench_tools"])}

    def __post_init__(self) -> None:
        from tooldisc.discovery.kernels import check_backend

        validate(self.parameter_constraints, self, error=UsageError)
        check_backend(self.backend)
