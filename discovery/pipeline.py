"""The one discovery chokepoint: authorize → retrieve → rank → clauses → cut.

Every surface (CLI, Python API, MCP, eval, canary simulation) calls
:meth:`Discoverer.discover`, which runs the fixed :data:`STEPS` tuple. Each step is a
pure function from one typed stage output (:mod:`.stages`) and the frozen index
record (:class:`~tooldisc.discovery.indexes.index.Index`) to the next, so nothing can rank a
tool the security filter did not pass: ranking only ever sees ``Authorized.indices``.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from tooldisc.discovery.catalog import Catalog
from tooldisc.discovery.config import RankerConfig, load_config
from tooldisc.discovery.context import default_context
from tooldisc.discovery.indexes.cache import IndexCache
from tooldisc.discovery.indexes.index import Index, build_index
from tooldisc.discovery.learned import Learned, narrows
from tooldisc.discovery.learned.apply import attach, learned_config
from tooldisc.discovery.model import Candidate, Confidence, Context, Offer
from tooldisc.discovery.mutation import MutationClassifier
from tooldisc.discovery.rank.abstention import (
    abstain_reason,
    content_cosines,
    content_ngram,
    model_reason,
    needs_content,
    no_tool_probability,
)
from tooldisc.discovery.rank.adaptive import choose_k
from tooldisc.discovery.rank.candidates import index_candidates
from tooldisc.discovery.rank.clauses import clause_rankings, rank_clauses
from tooldisc.discovery.rank.features import FEATURES, TIE_BREAKERS
from tooldisc.discovery.security import MUTATIONS, READ, check_tool
from tooldisc.discovery.stages import Authorized, Ranked, Request, Retrieved
from tooldisc.discovery.text import tokenize
from tooldisc.discovery.text.fields import stopwords, terms_of_tokens
from tooldisc.errors import UsageError
from tooldisc.limits import check_query

if TYPE_CHECKING:
    from tooldisc.discovery.rank.interleave import InterleavedOffer


def authorize(req: Request, ix: Index) -> Authorized:
    """Security first: the query's mutation class, then the §4 filter for this context."""
    # word rules, then hardening narrowing; the learned model (which reads the word lists' class,
    # the same one whenever the rules did not already narrow to READ) may only narrow further
    mutation = ix.classifier.classify(req.query, list(req.tokens))
    if ix.mutation_model is not None and narrows(ix.mutation_model, set(terms_of_tokens(list(req.tokens))), mutation):
        mutation = READ  # a learned file may only narrow the word lists' class, never widen it
    if req.mutation_cap is not None and mutation != req.mutation_cap:
        mutation = READ  # the intersection of two different mutation rows is read-only
    return Authorized(req, mutation, ix.authorized(req.context, mutation))


def retrieve(auth: Authorized, ix: Index) -> Retrieved:
    """Candidates for ranking, always a subset of the authorized set.

    Small authorized sets are ranked whole. Large ones (``retrieval.min_tools``) get
    ``retrieval.candidates`` tools from the inverted indexes (best BM25F, plus best
    on the query's rarer character n-grams) before the full ranker; when the index
    yields nothing or is stale, every authorized tool is ranked and the offer says why.
    """
    tokens = list(auth.request.tokens)
    lexical = ix.lexical.scores(tokens)
    history = auth.request.history
    qv, content = _vectors(tokens, ix)
    if len(auth.indices) < ix.config.retrieval.min_tools or auth.request.exhaustive:
        return Retrieved(auth, auth.indices, lexical, _ngram_of(auth.indices, tokens, ix, qv), "full", history,
                         content_vector=content)
    problem = ix.problem()
    if problem is None:
        ctx = auth.request.context
        # the memoised mask of this very set; any other set builds its own (never a wider one)
        allowed = ix.authorized.mask(ctx, auth.mutation) if ix.authorized(ctx, auth.mutation) is auth.indices else None
        cand = index_candidates(auth.indices, tokens, lexical, ix, qv, auth.mutation, allowed)
        if len(cand):
            ngram = shared = None
            if ix.ngram is not None and qv is not None:
                ngram = np.zeros(ix.size, dtype=np.float32)
                shared, ngram[cand] = ix.ngram.shared_cosines(cand, qv[0], qv[1])
            return Retrieved(auth, cand, lexical, ngram, "indexed", history, ngram_counts=shared,
                             content_vector=content)
        problem = "empty"
    return Retrieved(auth, auth.indices, lexical, _ngram_of(auth.indices, tokens, ix, qv), "full", history,
                     fallback_reason=problem, content_vector=content)


def _vectors(tokens: list[str], ix: Index) -> tuple[Any, Any]:
    """The query's n-gram vector and its content words' (None unless some tokens, not all, are stop words).

    One pass over the query's n-grams gives both (:meth:`~tooldisc.discovery.indexes.ngrams.NgramIndex.query_vectors`).
    """
    if ix.ngram is None:
        return None, None
    stop = stopwords()
    part = np.fromiter((t not in stop for t in tokens), dtype=np.uint8, count=len(tokens))
    n_content = int(part.sum())
    if not 0 < n_content < len(tokens):  # the content words' vector would be discarded: not weighed at all
        return ix.ngram.query_vector(tokens), None
    return ix.ngram.query_vectors(tokens, part)


def _ngram_of(indices: np.ndarray, tokens: list[str], ix: Index, qv: Any = None) -> np.ndarray | None:
    """The n-gram cosine of the tools ranked whole (a dense vector read only through ``indices``).

    :meth:`~tooldisc.discovery.indexes.ngrams.NgramIndex.scores_of` chooses the layout; ``qv``: the query's vector.
    """
    if ix.ngram is None:
        return None
    ngram = np.zeros(ix.size, dtype=np.float32)
    ngram[indices] = ix.ngram.scores_of(tokens, indices, qv)
    return ngram


def rank(ret: Retrieved, ix: Index) -> Ranked:
    """``score = Σ wᵢ·featureᵢ``; ties break by tool name.

    A tool is ranked only when a relevance feature (not a tie-breaker) is positive.
    """
    contributions: dict[str, np.ndarray] = {}
    total = np.zeros(len(ret.indices), dtype=np.float64)
    relevance = np.zeros(len(ret.indices), dtype=np.float64)
    for name, fn in FEATURES.items():
        w = ix.config.weight(name)
        if w == 0.0 or len(ret.indices) == 0:
            continue
        value = w * fn(ix, ret).astype(np.float64)
        contributions[name] = value
        total += value
        if name not in TIE_BREAKERS:
            relevance += value
    positive = np.flatnonzero(relevance > 0)
    limit = ret.authorized.request.depth
    if limit is not None and len(positive) > 4 * limit:
        # Keep the top ``limit`` and every tool tied with the last, so the name tie-break stays exact.
        s = total[positive]
        kth = np.partition(s, len(s) - limit)[len(s) - limit]
        positive = positive[s >= kth]
    order = positive[np.lexsort((ix.name_rank[ret.indices[positive]], -total[positive]))]
    signals = {"bm25": float(ret.lexical[ret.indices].max(initial=0.0))}
    if "history" in contributions:
        signals["history"] = float(contributions["history"].max(initial=0.0))
    floor = (ix.abstention is None or not ix.abstention.decides) and ret.ngram is not None
    # the content words' cosines, read once for the floor and the abstention model alike
    content = content_cosines(ret, ix, ret.indices) if floor and needs_content(ret, ix, signals["bm25"]) else None
    if ix.abstention is not None:
        signals["no_tool"] = no_tool_probability(ret, ix, signals["bm25"], _top_expansion(ret, ix, contributions),
                                                 content)
    if floor:
        signals["ngram"] = content_ngram(ret, ix, signals["bm25"], content)
    if ix.embedding is not None and len(ret.indices):
        signals["embedding"] = float(ix.embedding.similarity(ret.authorized.request.query, ret.indices).max())
    return Ranked(ret, ret.indices[order], total[order], {k: v[order] for k, v in contributions.items()}, signals)


def _top_expansion(ret: Retrieved, ix: Index, contributions: dict[str, np.ndarray]) -> float:
    """The retrieved tools' best expansion feature, from the rank step's contribution when it has one."""
    if ix.expansion is None or not len(ret.indices):
        return 0.0
    if "expansion" in contributions:
        return float(contributions["expansion"].max()) / ix.config.weight("expansion")
    return float(FEATURES["expansion"](ix, ret).max())


def clauses(ranked: Ranked, ix: Index) -> Ranked:
    """A multi-step request's ranking fused with each clause's (``clauses.weight``; off at 0).

    The clauses reuse this request's authorized set, so they only reorder what the filter passed.
    """
    return rank_clauses(ranked, ix, retrieve, rank)


def cut(ranked: Ranked, ix: Index) -> Offer:
    """Choose K (fixed or adaptive), abstain when nothing fits, and seal the offer."""
    req = ranked.retrieved.authorized.request
    cfg = ix.config
    scores = ranked.scores
    top = float(scores[0]) if len(scores) else 0.0
    second = float(scores[1]) if len(scores) > 1 else 0.0
    if ix.abstention is not None and ix.abstention.decides:
        abstain = model_reason(ranked.signals, ix)
    else:
        abstain = abstain_reason(ranked.signals, cfg.abstain)
    if not len(scores) or abstain:
        k = cfg.k if req.k == "auto" else int(req.k)
        why, n = abstain or "no authorized tool matched the query", 0
    elif req.k == "auto":
        k, why = choose_k(scores, cfg.adaptive)
        n = min(k, len(scores))
    else:
        k, why = int(req.k), "fixed K"
        n = min(k, len(scores))
    names = ix.security.names
    # the offered rows as Python floats in one conversion per column, not one numpy scalar per value
    fnames = tuple(ranked.contributions)
    rows = zip(*[v[:n].tolist() for v in ranked.contributions.values()], strict=True) if fnames else [()] * n
    candidates = tuple([Candidate(names[t], s, dict(zip(fnames, row, strict=True)))
                        for t, s, row in zip(ranked.order[:n].tolist(), scores[:n].tolist(), rows, strict=True)])
    fits = 1.0 - ranked.signals["no_tool"] if "no_tool" in ranked.signals else None
    confidence = _confidence(top if n else 0.0, (top - second) if n else 0.0, n, fits)
    auth = ranked.retrieved.authorized
    offer_hash = _offer_hash(req, auth.mutation, k, candidates, ix)
    return Offer(
        query=req.query, context=req.context, mutation=auth.mutation, k=k, k_reason=why,
        candidates=candidates, confidence=confidence, authorized_count=len(auth.indices),
        retrieval=ranked.retrieved.method, catalog_hash=ix.catalog.hash, offer_hash=offer_hash,
        fallback_reason=ranked.retrieved.fallback_reason,
    )


def _offer_hash(req: Request, mutation: str, k: int, candidates: tuple[Candidate, ...], ix: Index) -> str:
    """SHA-256 over everything that decided the offer and what it offers; never timings.

    A compact unit-separated text rather than JSON: this runs on every request.
    """
    ctx = req.context
    parts = [
        "tooldisc-offer-v1", req.query, "\x1f".join(req.history), ctx.tenant or "",
        ",".join(sorted(ctx.roles)), ",".join(sorted(ctx.permissions)), ctx.mode, ",".join(sorted(ctx.forced)),
        mutation, str(k), ix.catalog.hash, ix.config_hash,
        *(f"{c.name}={c.score:.6f}" for c in candidates),
    ]
    if ix.learned_digest:
        parts.append(f"learned={ix.learned_digest}")
    return hashlib.sha256("\x1e".join(parts).encode("utf-8")).hexdigest()


def _confidence(top: float, gap: float, n: int, fits: float | None = None) -> Confidence:
    """Top score, gap and a level; with an abstention model, the calibrated P(some offered tool fits).

    With the model the level reads the probability (high ≥ 0.9, medium ≥ 0.7); without
    it, the relative gap between the first two scores, as before.
    """
    if n == 0:
        return Confidence(0.0, 0.0, "none", fits)
    if fits is not None:
        level = "high" if fits >= 0.9 else "medium" if fits >= 0.7 else "low"
        return Confidence(top, gap, level, fits)
    rel = gap / top if top > 0 else 0.0
    level = "high" if rel >= 0.25 else "medium" if rel >= 0.10 else "low"
    return Confidence(top, gap, level)


STEPS = (authorize, retrieve, rank, clauses, cut)


def _apply(state: Any, steps: Sequence[Any], ix: Index, timings: dict[str, float]) -> Any:
    """Run ``steps`` in order from ``state``, timing each into ``timings`` (milliseconds)."""
    for step in steps:
        t0 = time.perf_counter()
        state = step(state, ix)
        timings[step.__name__] = (time.perf_counter() - t0) * 1000.0
    return state


class Discoverer:
    """A catalog and a ranker config with everything precomputed for fast queries.

    Build once, call :meth:`discover` per request. The indexes live in one frozen
    :class:`~tooldisc.discovery.indexes.index.Index` (``self.index``), which is all the steps
    see; the authorized set is memoised there by (context, mutation). ``encoder``
    optionally shares the semantic tier's model between engines; ``index`` takes one
    built beforehand (:func:`~tooldisc.discovery.indexes.index.build_index`, e.g. with extra
    indexed columns) for this catalog and config. ``backend`` chooses the form of the query
    loops (``auto``, ``numpy`` or ``numba``: :func:`~tooldisc.discovery.kernels.kernels`);
    every backend gives the same offers, bit for bit. ``cache`` (an
    :class:`~tooldisc.discovery.indexes.cache.IndexCache`) reads the text indexes from disk when
    they were built before for this very catalog and config, and stores them otherwise; the
    security index is always built from the live catalog.
    """

    def __init__(self, catalog: Catalog, config: RankerConfig | None = None,
                 classifier: MutationClassifier | None = None, encoder: Any = None, *,
                 index: Index | None = None, learned: Learned | None = None, backend: str = "auto",
                 cache: IndexCache | None = None):
        config = learned_config(config or load_config(), learned)
        if index is not None and (index.catalog is not catalog or index.config != config):
            raise UsageError("The 'index' parameter must be built for the same catalog and config.")
        if learned is not None and not isinstance(learned, Learned):
            raise UsageError("The 'learned' parameter must be a Learned (tooldisc.load_learned(path)). "
                             f"Got {type(learned).__name__} instead.")
        if cache is not None and not isinstance(cache, IndexCache):
            raise UsageError("The 'cache' parameter must be an IndexCache (tooldisc.IndexCache.default()) or None. "
                             f"Got {type(cache).__name__} instead.")
        if index is None:
            index = build_index(catalog, config, classifier, encoder, backend=backend, cache=cache,
                                learned_digest=learned.digest if learned is not None else "")
        self.index = attach(index, learned)
        self._default_context = default_context(catalog)

    @classmethod
    def over(cls, index: Index) -> Discoverer:
        """A Discoverer over a built index record as it is: nothing is rebuilt, nothing attached.

        For a caller that varies a record it was given and runs the real steps on the
        variant: learning swaps in expansion indexes fitted on other folds
        (``Discoverer.over(dataclasses.replace(engine.index, expansion=...))``) instead of
        calling the steps by hand. The default context is the record's catalog's.
        """
        if not isinstance(index, Index):
            raise UsageError(f"The 'index' parameter must be an Index (Discoverer.index). Got {type(index).__name__} instead.")
        engine = cls.__new__(cls)
        engine.index = index
        engine._default_context = default_context(index.catalog)
        return engine

    @property
    def notes(self) -> tuple[str, ...]:
        """Warnings about the learned file in use (stale parts ignored); empty without one."""
        return self.index.learned_notes

    @property
    def catalog(self) -> Catalog:
        return self.index.catalog

    @property
    def config(self) -> RankerConfig:
        return self.index.config

    @property
    def default_context(self) -> Context:
        return self._default_context

    def authorized_indices(self, context: Context, mutation: str) -> np.ndarray:
        """Catalog indices the security filter passes for this context and mutation class."""
        return self.index.authorized(context, mutation)

    def _request(self, query: str, context: Context | None, k: int | str | None, history: Sequence[Any],
                 mutation: str | None = None) -> Request:
        if not isinstance(query, str):
            raise UsageError(f"The 'query' parameter must be a str. Got {type(query).__name__} instead.")
        check_query(query, "The 'query' parameter")
        turns = _history_texts(history)
        for i, turn in enumerate(turns):
            check_query(turn, f"history turn {i}")
        if mutation is not None and mutation not in MUTATIONS:
            raise UsageError(f"The 'mutation' parameter must be one of {', '.join(MUTATIONS)}. Got {mutation!r} instead.")
        kk = _check_k(k, self.config)
        depth = self.config.adaptive.max_k if kk == "auto" else int(kk)
        return Request(query, context or self._default_context, kk, turns, tuple(tokenize(query)), mutation, depth)

    def discover(self, query: str, context: Context | None = None, k: int | str | None = None,
                 history: Sequence[Any] = (), *, mutation: str | None = None) -> Offer:
        """Run the pipeline for one request. ``k`` is an int, ``"auto"`` or None (config K).

        ``mutation`` (e.g. the user's request class when a model searches on its behalf)
        can only narrow what the query's own class allows, never widen it.
        """
        req = self._request(query, context, k, history, mutation)
        return self._run(req)

    def _run(self, req: Request) -> Offer:
        """The fixed STEPS on one request, each step timed; timings stay out of the hash."""
        timings: dict[str, float] = {}
        t_all = time.perf_counter()
        offer: Offer = _apply(req, STEPS, self.index, timings)
        timings["total"] = (time.perf_counter() - t_all) * 1000.0
        # the offer the cut step just made holds its own empty dict: filled here, not copied into a second offer
        cast(dict, offer.timings).update(timings)
        return offer

    def discover_interleaved(self, other: Discoverer, query: str, context: Context | None = None,
                             k: int | str | None = None, history: Sequence[Any] = (), *, request_id: str,
                             mutation: str | None = None) -> InterleavedOffer:
        """One request offered as a team-draft interleaving of this ranker (A) and ``other`` (B).

        Security is this request's, decided once: the authorize step runs here (A's
        mutation class and authorized set), and B ranks that very set — B's own
        authorized set for the same context and class is computed and must be equal, or
        nothing is offered (an error). Both offers are cut at A's K (fixed or ``auto``,
        as A chose it), and :func:`~tooldisc.discovery.rank.interleave.team_draft` mixes them
        with coins seeded by ``request_id`` (the same id gives the same offer). ``other``
        must be built for the same catalog (any config or learned file).
        """
        from tooldisc.discovery.rank.interleave import check_request_id, interleave_offers

        if not isinstance(other, Discoverer):
            raise UsageError(f"The 'other' parameter must be a Discoverer. Got {type(other).__name__} instead.")
        if other.catalog.hash != self.catalog.hash:
            raise UsageError("The 'other' parameter must be a Discoverer built for the same catalog "
                             f"(catalog hash {self.catalog.hash[:12]}…). Got one for {other.catalog.hash[:12]}… instead.")
        check_request_id(request_id)
        req = self._request(query, context, k, history, mutation)
        timings: dict[str, float] = {}
        t0 = time.perf_counter()
        auth: Authorized = _apply(req, STEPS[:1], self.index, timings)
        offer_a: Offer = _apply(auth, STEPS[1:], self.index, timings)
        timings["total"] = (time.perf_counter() - t0) * 1000.0
        cast(dict, offer_a.timings).update(timings)
        # B: the same request at A's K, ranking A's authorized set (never a set of its own)
        ix_b = other.index
        req_b = replace(req, k=offer_a.k, depth=offer_a.k)
        own = ix_b.authorized(req.context, auth.mutation)
        if not np.array_equal(own, auth.indices):
            raise UsageError("interleaving refused: the two rankers' authorized sets differ for this request "
                             "(they must be built for the same catalog)")
        timings_b: dict[str, float] = {}
        t0 = time.perf_counter()
        offer_b: Offer = _apply(Authorized(req_b, auth.mutation, auth.indices), STEPS[1:], ix_b, timings_b)
        timings_b["total"] = (time.perf_counter() - t0) * 1000.0
        cast(dict, offer_b.timings).update(timings_b)
        return interleave_offers(offer_a, offer_b, request_id)

    def candidates(self, query: str, context: Context | None = None,
                   history: Sequence[Any] = ()) -> tuple[np.ndarray, np.ndarray, str]:
        """(authorized, retrieved, method) catalog indices: the first two steps only.

        For measuring candidate recall@N of indexed retrieval; ranking is not run.
        """
        ret = self.retrieved(query, context, None, history)
        return ret.authorized.indices, ret.indices, ret.method

    def retrieved(self, query: str, context: Context | None = None, k: int | str | None = None,
                  history: Sequence[Any] = ()) -> Retrieved:
        """The first two steps of one request (authorize, retrieve) as :meth:`discover` runs them.

        The candidates and everything the rank step's features read
        (:data:`~tooldisc.discovery.rank.features.FEATURES` take ``(self.index, retrieved)``):
        what ``tooldisc learn`` fits on, so it fits on exactly what discovery ranks.
        """
        ix = self.index
        return retrieve(authorize(self._request(query, context, k, history), ix), ix)

    def ranked(self, query: str, context: Context | None = None, k: int | str | None = None,
               history: Sequence[Any] = ()) -> Ranked:
        """The first three steps of one request (authorize, retrieve, rank) as :meth:`discover` runs them,
        before the clauses step fuses and the cut: ``k`` bounds the ranked depth as there."""
        ix = self.index
        return rank(retrieve(authorize(self._request(query, context, k, history), ix), ix), ix)

    def clause_rankings(self, whole: Ranked, clauses: Sequence[str]) -> list[Ranked]:
        """Each of ``clauses`` ranked by the same steps over ``whole``'s authorized set (no history), as
        the clauses step ranks them before fusing (:func:`~tooldisc.discovery.rank.clauses.fused_order`)."""
        return clause_rankings(whole, clauses, self.index, retrieve, rank)

    def discover_exhaustive(self, query: str, context: Context | None = None, k: int | str | None = None,
                            history: Sequence[Any] = ()) -> Offer:
        """The offer without indexed retrieval: every authorized tool ranked.

        The reference that candidate recall@N of the index is measured against; the
        same steps run, only retrieval skips the index.
        """
        return self._run(replace(self._request(query, context, k, history), exhaustive=True))

    def explain(self, query: str, tool: str, context: Context | None = None, k: int | str | None = None,
                history: Sequence[Any] = ()) -> dict[str, Any]:
        """Which step removed ``tool``, or where and why it ranked — for operators."""
        ctx = context or self._default_context
        offer = self.discover(query, ctx, k, history)
        out: dict[str, Any] = {"tool": tool, "query": query, "mutation": offer.mutation, "k": offer.k}
        t = self.catalog.by_name.get(tool)
        if t is None:
            return {**out, "status": "unknown", "step": None, "reason": "no tool of that name in the catalog"}
        refusal = check_tool(t, ctx, offer.mutation)
        if refusal is not None:
            return {**out, "status": "removed", "step": f"authorize/{refusal.step}", "reason": refusal.reason}
        ix = self.index
        req = replace(self._request(query, ctx, k, history), depth=None)
        ranked = clauses(rank(retrieve(authorize(req, ix), ix), ix), ix)
        idx = ix.security.name_to_idx[tool]
        pos = np.flatnonzero(ranked.order == idx)
        matched = ix.lexical.matched_terms(query, idx)
        if not len(pos):
            return {**out, "status": "not_ranked", "step": "rank",
                    "reason": "authorized, but its score is not positive: no query term matched its fields",
                    "matched_terms": matched}
        i = int(pos[0])
        features = {f: round(float(v[i]), 6) for f, v in ranked.contributions.items()}
        in_offer = tool in offer.names
        return {**out, "status": "offered" if in_offer else "below_cut",
                "step": None if in_offer else "cut", "rank": i + 1, "score": round(float(ranked.scores[i]), 6),
                "features": features, "matched_terms": matched,
                "reason": f"ranked {i + 1} of {len(ranked.order)} scored tools; "
                          + ("inside the offer" if in_offer else f"outside the top {offer.k} ({offer.k_reason})")}


def _check_k(k: int | str | None, cfg: RankerConfig) -> int | str:
    if k is None:
        return cfg.k
    if k == "auto":
        return "auto"
    if isinstance(k, str) and k.isdigit():
        k = int(k)
    from tooldisc.limits import K_REQUEST
    from tooldisc.params import checked

    return checked(K_REQUEST, k, "k", UsageError)


def _history_texts(history: Sequence[Any]) -> tuple[str, ...]:
    """Earlier user turns as text: strings, or ``{"role": "user", "content": ...}`` items."""
    out = []
    for turn in history:
        if isinstance(turn, str):
            out.append(turn)
        elif isinstance(turn, dict):
            if turn.get("role", "user") == "user" and isinstance(turn.get("content"), str):
                out.append(turn["content"])
        elif isinstance(turn, tuple) and len(turn) == 2 and turn[0] == "user":
            out.append(str(turn[1]))
    return tuple(out)


def discover(query: str, context: Context | None = None, k: int | str | None = None,
             history: Sequence[Any] = (), *, catalog: Catalog, config: RankerConfig | None = None) -> Offer:
    """One-off discovery. Builds the index each call: use :class:`Discoverer` for many queries."""
    return Discoverer(catalog, config).discover(query, context, k, history)
