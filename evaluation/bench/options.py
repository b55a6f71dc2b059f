"""What one ``tooldisc bench`` run measures (:class:`BenchOptions`).

Kept apart from the harness (:mod:`.run`) so the per-size measuring (:mod:`.measure`)
reads the options without importing the module that calls it: no import circle.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tooldisc.errors import UsageError


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

    def __post_init__(self) -> None:
        from tooldisc.limits import check_count

        for name, bound in (("queries", "bench_queries"), ("repeats", "repeats"), ("k", "k"),
                            ("build_repeats", "repeats"), ("seed", "seed")):
            check_count(bound, getattr(self, name), f"The {name!r} parameter")
        from tooldisc.discovery.kernels import check_backend

        check_backend(self.backend)
        if not self.sizes:
            raise UsageError(f"The 'sizes' parameter must be positive ints. Got {self.sizes!r} instead.")
        for n in self.sizes:
            check_count("bench_tools", n, "The 'sizes' parameter's each size")
