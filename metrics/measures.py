"""Measures as small value objects, parsed from and printed as names like ``nDCG@10``.

A measure holds no compute code (the ir_measures model): it is a name, an optional
cutoff, the queries it averages over and how its per-query values aggregate. That
keeps measures hashable dict keys for reports and sweeps, and lets one computation
(:mod:`tooldisc.metrics.compute`) serve every K from one ranking.

Names are parsed with a regular expression and ``int``, never ``eval``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from tooldisc.errors import UsageError

# Which queries a measure averages over (DESIGN §6).
MATCHED = "matched"  # at least one primary tool, not labelled no-match
NO_MATCH = "no_match"
ALL = "all"


@dataclass(frozen=True)
class Measure:
    """Base of every measure: a name and an optional cutoff.

    ``CUTOFF`` says whether the name takes ``@K``: ``"optional"`` (without it the
    measure covers the whole offer), ``"required"`` or ``"none"``. ``DOMAIN`` names
    the queries it averages over; ``AGGREGATE`` is ``"mean"``, ``"p50"`` or ``"p95"``.
    ``RATE`` is true for measures whose values lie in [0, 1]. ``BETTER`` says which
    direction is an improvement (risks and costs are ``"lower"``). ``IR_MEASURES`` is
    the same measure in ir_measures' notation, relevance level included, for a run
    and qrels exported to TREC files (``None``: no TREC equivalent); ``RELEVANCE``
    says in words which labels count as relevant.
    """

    cutoff: int | None = None

    NAME: ClassVar[str] = ""
    CUTOFF: ClassVar[str] = "optional"
    DOMAIN: ClassVar[str] = MATCHED
    AGGREGATE: ClassVar[str] = "mean"
    RATE: ClassVar[bool] = True
    BETTER: ClassVar[str] = "higher"
    IR_MEASURES: ClassVar[str | None] = None
    RELEVANCE: ClassVar[str | None] = None

    def __post_init__(self) -> None:
        c = self.cutoff
        if self.CUTOFF == "none" and c is not None:
            raise UsageError(f"{self.NAME} takes no cutoff; got @{c}")
        if self.CUTOFF == "required" and c is None:
            raise UsageError(f"{self.NAME} needs a cutoff, as in {self.NAME}@10")
        if c is not None and (isinstance(c, bool) or not isinstance(c, int) or c < 1):
            raise UsageError(
                f"The 'cutoff' parameter of {self.NAME} must be an int in the range [1, inf). "
                f"Got {c!r} instead."
            )

    def __str__(self) -> str:
        return self.NAME if self.cutoff is None else f"{self.NAME}@{self.cutoff}"

    @property
    def lower_is_better(self) -> bool:
        return self.BETTER == "lower"

    @property
    def ir_measures(self) -> str | None:
        """``RR(rel=2)``, ``nDCG@15``: this measure as ir_measures names it, or ``None``."""
        if self.IR_MEASURES is None:
            return None
        return self.IR_MEASURES if self.cutoff is None else f"{self.IR_MEASURES}@{self.cutoff}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}(cutoff={self.cutoff!r})" if self.CUTOFF != "none" else f"{type(self).__name__}()"


@dataclass(frozen=True, repr=False)
class Hit(Measure):
    """At least one primary tool in the top K (what seed 003 calls Recall@K)."""

    NAME: ClassVar[str] = "hit"
    IR_MEASURES: ClassVar[str | None] = "Success(rel=2)"
    RELEVANCE: ClassVar[str | None] = "primary (qrels grade 2)"


@dataclass(frozen=True, repr=False)
class Complete(Measure):
    """Every primary tool in the top K (multi-tool queries need all of them)."""

    NAME: ClassVar[str] = "complete"
    RELEVANCE: ClassVar[str | None] = "primary (qrels grade 2)"


@dataclass(frozen=True, repr=False)
class Recall(Measure):
    """TREC recall: the share of primary tools in the top K."""

    NAME: ClassVar[str] = "recall"
    IR_MEASURES: ClassVar[str | None] = "R(rel=2)"
    RELEVANCE: ClassVar[str | None] = "primary (qrels grade 2)"


@dataclass(frozen=True, repr=False)
class MRR(Measure):
    """Reciprocal rank of the first primary tool within the offer (cut at K if given)."""

    NAME: ClassVar[str] = "MRR"
    IR_MEASURES: ClassVar[str | None] = "RR(rel=2)"
    RELEVANCE: ClassVar[str | None] = "primary (qrels grade 2)"


@dataclass(frozen=True, repr=False)
class Precision(Measure):
    """Share of the top K that is primary or acceptable; divides by K, as trec_eval's P_K."""

    NAME: ClassVar[str] = "P"
    IR_MEASURES: ClassVar[str | None] = "P(rel=1)"
    RELEVANCE: ClassVar[str | None] = "primary or acceptable (grade >= 1)"


@dataclass(frozen=True, repr=False)
class NDCG(Measure):
    """Graded nDCG: gain 2 primary, 1 acceptable, linear gain, log2 discount (trec_eval)."""

    NAME: ClassVar[str] = "nDCG"
    IR_MEASURES: ClassVar[str | None] = "nDCG"
    RELEVANCE: ClassVar[str | None] = "graded: gain 2 primary, 1 acceptable"


@dataclass(frozen=True, repr=False)
class Forbidden(Measure):
    """Share of all queries whose top K holds a tool the query must not see."""

    NAME: ClassVar[str] = "forbidden"
    DOMAIN: ClassVar[str] = ALL
    BETTER: ClassVar[str] = "lower"


@dataclass(frozen=True, repr=False)
class NoMatchSuccess(Measure):
    """Share of no-match queries given an empty offer, whatever K is asked for."""

    NAME: ClassVar[str] = "no_match_success"
    CUTOFF: ClassVar[str] = "none"
    DOMAIN: ClassVar[str] = NO_MATCH


@dataclass(frozen=True, repr=False)
class FalseAbstention(Measure):
    """Share of matched queries given an empty offer (they score 0 on ranking measures)."""

    NAME: ClassVar[str] = "false_abstention"
    CUTOFF: ClassVar[str] = "none"
    BETTER: ClassVar[str] = "lower"


@dataclass(frozen=True, repr=False)
class CandidateRecall(Measure):
    """Share of primary tools among the first N retrieved candidates (before ranking)."""

    NAME: ClassVar[str] = "candidate_recall"
    CUTOFF: ClassVar[str] = "required"


@dataclass(frozen=True, repr=False)
class AvgK(Measure):
    """Mean offer length over all queries (adaptive K makes this a cost)."""

    NAME: ClassVar[str] = "avg_k"
    CUTOFF: ClassVar[str] = "none"
    DOMAIN: ClassVar[str] = ALL
    RATE: ClassVar[bool] = False
    BETTER: ClassVar[str] = "lower"


@dataclass(frozen=True, repr=False)
class SchemaTokens(Measure):
    """Mean estimated schema tokens per offer."""

    NAME: ClassVar[str] = "schema_tokens"
    CUTOFF: ClassVar[str] = "none"
    DOMAIN: ClassVar[str] = ALL
    RATE: ClassVar[bool] = False
    BETTER: ClassVar[str] = "lower"


@dataclass(frozen=True, repr=False)
class LatencyP50(Measure):
    """Median discovery latency in milliseconds."""

    NAME: ClassVar[str] = "latency_p50"
    CUTOFF: ClassVar[str] = "none"
    DOMAIN: ClassVar[str] = ALL
    AGGREGATE: ClassVar[str] = "p50"
    RATE: ClassVar[bool] = False
    BETTER: ClassVar[str] = "lower"


@dataclass(frozen=True, repr=False)
class LatencyP95(Measure):
    """95th-percentile discovery latency in milliseconds."""

    NAME: ClassVar[str] = "latency_p95"
    CUTOFF: ClassVar[str] = "none"
    DOMAIN: ClassVar[str] = ALL
    AGGREGATE: ClassVar[str] = "p95"
    RATE: ClassVar[bool] = False
    BETTER: ClassVar[str] = "lower"


MEASURES: tuple[type[Measure], ...] = (
    Hit, Complete, Recall, MRR, Precision, NDCG, Forbidden, NoMatchSuccess, FalseAbstention,
    CandidateRecall, AvgK, SchemaTokens, LatencyP50, LatencyP95,
)
RANKING: tuple[type[Measure], ...] = (Hit, Complete, Recall, MRR, Precision, NDCG)
_BY_NAME: dict[str, type[Measure]] = {cls.NAME.lower(): cls for cls in MEASURES}
_NAME_RE = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:@\s*([0-9]+))?\s*\Z")


def _allowed() -> str:
    forms = []
    for cls in MEASURES:
        forms.append({"optional": f"{cls.NAME}[@K]", "required": f"{cls.NAME}@N", "none": cls.NAME}[cls.CUTOFF])
    return ", ".join(forms)


def parse_measure(name: str | Measure) -> Measure:
    """``"nDCG@10"`` → ``NDCG(cutoff=10)``; names match case-insensitively.

    A :class:`Measure` passes through unchanged, so callers may mix both forms.
    """
    if isinstance(name, Measure):
        return name
    if not isinstance(name, str):
        raise UsageError(f"a measure must be a name such as 'nDCG@10'; got {type(name).__name__}")
    m = _NAME_RE.match(name)
    cls = _BY_NAME.get(m.group(1).lower()) if m else None
    if m is None or cls is None:
        raise UsageError(f"unknown measure {name!r}; allowed: {_allowed()} (K a positive integer)")
    cutoff = int(m.group(2)) if m.group(2) is not None else None
    try:
        return cls(cutoff=cutoff)
    except UsageError as exc:
        raise UsageError(f"measure {name!r}: {exc.message}") from None


def parse_measures(names: str | Measure | list[str | Measure] | tuple[str | Measure, ...]) -> tuple[Measure, ...]:
    """A comma-separated string or a sequence of names → measures, duplicates dropped, order kept."""
    items = [p for p in names.split(",") if p.strip()] if isinstance(names, str) else list(
        [names] if isinstance(names, Measure) else names)
    out: dict[Measure, None] = {}
    for item in items:
        out[parse_measure(item)] = None
    return tuple(out)
