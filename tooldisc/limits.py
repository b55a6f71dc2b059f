"""Every bound on what a user may ask for, in one table: request text and count arguments.

A request is capped at :data:`MAX_QUERY_CHARS` characters wherever it enters (CLI
``discover``, :meth:`Discoverer.discover`, an MCP ``tooldisc/query``, gold and eval
queries, ``learn`` rows, TREC topics; earlier turns too), so no request can make
discovery slow: every pass over its text is linear as well, and the cap keeps the
constant small. Each count argument has a maximum chosen so the work fits an ordinary
machine (the reason is in :data:`COUNTS`); a value above it is refused before any work,
exit 2. Each entry is a rulebook constraint (:class:`tooldisc.params.Interval`): the CLI
declares its options' ranges from this table, and the library checks the same numbers
(:func:`check_count`), so both refuse alike, in the rulebook's one message form.
"""

from __future__ import annotations

from tooldisc.errors import ToolDiscError, UsageError
from tooldisc.params import Either, Interval, Nothing, Options

MAX_QUERY_CHARS = 10_000  # a request of ten thousand characters: about 1,500 words, far past any prompt's ask


def Count(low: int, high: int, why: str) -> Interval:
    """One count argument's constraint: an int (never a bool nor ``3.0``) in ``[low, high]``, and why."""
    return Interval(int, low, high, strict=True, why=why)


MAX_SEED = 2**63 - 1

COUNTS: dict[str, Interval] = {
    "k": Count(1, 1_000, "tools per offer; a config's k has the same range"),
    "bench_tools": Count(1, 1_000_000, "one synthetic catalog per size; 100,000 tools take ~0.3 GB, 1,000,000 ~3 GB"),
    "bench_queries": Count(1, 100_000, "queries per catalog size"),
    "repeats": Count(1, 1_000, "timed passes over the queries"),
    "ids": Count(1, 100_000_000, "synthetic ids are held in DuckDB: 100 million take 0.8 GB and ~3 minutes"),
    "events": Count(1, 100_000_000, "rows written: 100 million events are ~3 GB of Parquet (64 GB of JSONL)"),
    "folds": Count(2, 100, "cross-validation folds"),
    "n_iter": Count(0, 10_000, "random draws, each a full evaluation on every dataset"),
    "permutations": Count(1, 1_000_000, "sign flips per measure: 100 times the default 10,000"),
    "resamples": Count(1_000, 100_000, "bootstrap resamples per comparison: 10 times the default 10,000"),
    "listed": Count(0, 100_000, "rows listed in a report (worst misses, changed queries)"),
    "sample": Count(10, 1_000_000, "requests whose ranking features are computed"),
    "min_requests": Count(2, 1_000_000, "k of k-anonymity"),
    "max_phrases": Count(1, 10_000, "expansion phrases kept per tool"),
    "rrf_k": Count(0, 1_000_000, "RRF's constant k in 1 / (k + rank)"),
    "depth": Count(1, 1_000_000, "tools kept per query in a fused run"),
    "seed": Count(0, MAX_SEED, "a seed: any non-negative 64-bit integer"),
}


# ``k``, one rule: an offer's size is an int in COUNTS["k"] (a config's ``k`` and the CLI's
# ``--k``, which may also say "auto"); the Python API also takes a deeper int (a depth, clipped
# to the catalog's size), "auto" (the adaptive cut) or None (the config's k).
K_OPTION = Either((COUNTS["k"], Options(("auto",))))
K_REQUEST = Either((COUNTS["k"].but(high=None, why=""), Options(("auto",)), Nothing()))


def check_count(name: str, value: object, option: str | None = None, *, low: int | None = None,
                error: type[ToolDiscError] = UsageError) -> int:
    """``value`` if it is an int within :data:`COUNTS` ``[name]`` (``low`` overrides its minimum), else an error.

    The message is the rulebook's (:mod:`tooldisc.params`), naming the option (``option``, else
    the parameter), the range and its reason: ``--ids must be an int in the range [1, 100000000]
    (synthetic ids …). Got 99999999999999999999999 instead.``
    """
    rule = COUNTS[name] if low is None else COUNTS[name].but(low=low)
    found = rule.problem(value, option or name)
    if found is not None:
        raise error(found[1])
    return value  # type: ignore[return-value]


def check_query(text: str, what: str = "the request", *, error: type[ToolDiscError] = UsageError,
                file: str | None = None, where: str | None = None) -> str:
    """``text`` if it is at most :data:`MAX_QUERY_CHARS` characters; else one error line saying so."""
    if len(text) > MAX_QUERY_CHARS:
        raise error(f"{what} is {len(text):,} characters long; at most {MAX_QUERY_CHARS:,} are read "
                    "(tooldisc.limits.MAX_QUERY_CHARS)", file=file, where=where)
    return text
