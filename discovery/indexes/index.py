"""The frozen index record: everything precomputed from (catalog, ranker config).

The pipeline steps, ranking features, abstention and candidate retrieval read only
this record (never the :class:`~tooldisc.discovery.pipeline.Discoverer` that holds
it), so each takes what it needs and none imports the pipeline.

Adding an indexed field that is not authored catalog text (for example learned
query expansions per tool) is local: pass its texts as ``extra_columns`` to
:func:`build_index` and give the field a weight in the config's ``fields``
section (name it in :data:`tooldisc.discovery.config.FIELDS`). The texts go into
the BM25F matrix beside the authored fields but never into the tool records, so
definition hashes and policy are untouched. A learned model applied at ranking
time is a new optional attribute here plus a function in
:data:`tooldisc.discovery.rank.features.FEATURES`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from tooldisc.discovery.catalog import Catalog
from tooldisc.discovery.config import RankerConfig
from tooldisc.discovery.indexes.aliases import AliasIndex
from tooldisc.discovery.indexes.cache import IndexCache
from tooldisc.discovery.indexes.lexical import LexicalBuilder, LexicalIndex
from tooldisc.discovery.indexes.ngrams import ALL_FIELDS, SHORT_FIELDS, NgramBuilder, NgramIndex
from tooldisc.discovery.model import Context
from tooldisc.discovery.mutation import MutationClassifier, load_classifier
from tooldisc.discovery.security import SecurityIndex
from tooldisc.discovery.text.columns import (
    CHUNK_TEXTS,
    RawTokens,
    columns_token_ids,
    release_memory,
)
from tooldisc.discovery.text.fields import TextColumns
from tooldisc.memory import gc_paused

_CACHE_LIMIT = 256


class AuthorizedSets:
    """The authorized tool indices per (context, mutation), memoised (the catalog is fixed).

    A memo of :class:`SecurityIndex` masks, never a decision of its own: a miss
    recomputes from the security index.
    """

    def __init__(self, security: SecurityIndex):
        self.security = security
        self._static: dict[Context, np.ndarray] = {}
        self._authorized: dict[tuple[Context, str], tuple[np.ndarray, np.ndarray]] = {}

    def __call__(self, context: Context, mutation: str) -> np.ndarray:
        return self._entry(context, mutation)[0]

    def mask(self, context: Context, mutation: str) -> np.ndarray:
        """The same set as a read-only boolean mask over the catalog (membership without a search)."""
        return self._entry(context, mutation)[1]

    def _entry(self, context: Context, mutation: str) -> tuple[np.ndarray, np.ndarray]:
        key = (context, mutation)
        hit = self._authorized.get(key)
        if hit is None:
            static = self._static.get(context)
            if static is None:
                static = self.security.static_mask(context)
                _put(self._static, context, static)
            mask = static & self.security.mutation_mask(mutation, context)
            indices = np.flatnonzero(mask)
            indices.setflags(write=False)
            mask.setflags(write=False)
            hit = (indices, mask)
            _put(self._authorized, key, hit)
        return hit


def _put(cache: dict, key: Any, value: Any) -> None:
    if len(cache) >= _CACHE_LIMIT:
        cache.pop(next(iter(cache)))
    cache[key] = value


@dataclass(frozen=True)
class Index:
    """A catalog's indexes for one ranker config, and what the steps need beside them."""

    catalog: Catalog
    config: RankerConfig
    classifier: MutationClassifier
    security: SecurityIndex
    authorized: AuthorizedSets
    lexical: LexicalIndex
    ngram: NgramIndex | None
    alias: AliasIndex | None
    embedding: Any  # EmbeddingIndex from the semantic extra, or None
    is_core: np.ndarray
    name_rank: np.ndarray  # position of each tool in name order: the final tie-break
    config_hash: str = field(default="")
    # Hash of the catalog the arrays were built from, when an index is paired with a
    # catalog it was not built from; None: built from ``catalog`` itself (hashing a large
    # catalog is the catalog's work, not the index's: it happens once, on first use).
    built_from: str | None = None
    # What a learned file adds (discovery/learned/__init__.py): ranking, abstention and narrowing only.
    expansion: Any = None  # ExpansionIndex over learned phrases, or None
    affinity: Any = None  # AffinityIndex of learned phrase weights, or None
    abstention: Any = None  # Abstention model (a learned file's, or the shipped one): the offer's confidence
    mutation_model: Any = None  # MutationModel that may narrow the word lists' class to READ, or None
    learned_digest: str = ""  # SHA-256 of the learned file in use ("" without one): part of every offer hash
    learned_notes: tuple[str, ...] = ()  # stale parts ignored, said loudly by every command
    kernels: Any = None  # the query loops' backend (tooldisc.discovery.kernels.Kernels) the indexes use

    @property
    def size(self) -> int:
        return len(self.catalog)

    def problem(self) -> str | None:
        """Why the candidate index cannot be trusted for this catalog, if it cannot."""
        if self.built_from is not None and self.built_from != self.catalog.hash:
            return "stale_index"
        return None


def build_index(catalog: Catalog, config: RankerConfig, classifier: MutationClassifier | None = None,
                encoder: Any = None, extra_columns: Mapping[str, Sequence[str]] | None = None,
                backend: str = "auto", cache: IndexCache | None = None, learned_digest: str = "") -> Index:
    """Build every index the config's non-zero weights and floors need.

    ``extra_columns`` maps a field name to one text per tool (in catalog order) that
    is indexed but is not part of the tool (see the module docstring). What a learned file adds is
    attached afterwards (:func:`tooldisc.discovery.learned.apply.attach`). ``backend`` chooses the query
    loops' form (:func:`tooldisc.discovery.kernels.kernels`); every backend gives the same offers.
    ``cache``: read the text indexes (BM25F, n-grams, aliases; never the security index) from this
    on-disk cache when an entry for exactly this catalog, config, learned file and code exists, else
    build and store them (:mod:`tooldisc.discovery.indexes.cache`); not with ``extra_columns`` or a
    config that uses the semantic tier.
    """
    from tooldisc.discovery.kernels import check_backend, kernels

    check_backend(backend)
    cfg = config
    needs_embedding = cfg.weight("embedding") or cfg.abstain.min_embedding
    with gc_paused():  # the builds allocate millions of small objects at 100k tools
        def text() -> dict[str, Any]:
            lexical, ngram = _text_indexes(TextColumns(catalog.tools, extra_columns), cfg)
            alias = AliasIndex.build(catalog.tools, cfg.text.stem) if cfg.weight("alias") else None
            return {"lexical": lexical, "ngram": ngram, "alias": alias}

        if cache is not None and not extra_columns and not needs_embedding:
            from tooldisc.discovery.indexes.cache import cached, key_parts

            parts = key_parts(catalog, cfg, learned_digest)
            built, _hit = cached(cache, parts, text, {"lexical": LexicalIndex, "ngram": NgramIndex,
                                                       "alias": AliasIndex})
        else:
            built = text()
        lexical, ngram, alias = built["lexical"], built["ngram"], built["alias"]
        del built
        embedding = _embedding_index(catalog, encoder) if needs_embedding else None
        security = SecurityIndex(catalog.tools, catalog.name_index)
        order = np.frombuffer(catalog.name_index.order, dtype=catalog.name_index.order.typecode)  # shared memory
        name_rank = np.empty(len(order), dtype=order.dtype)
        name_rank[order] = np.arange(len(order), dtype=order.dtype)
    release_memory(len(catalog.tools))
    # a choice, not a load: numba and its machine code load on the first query that calls a loop
    loops = kernels(backend, large=len(catalog) >= cfg.retrieval.min_tools)
    lexical = replace(lexical, kernels=loops)
    ngram = replace(ngram, kernels=loops) if ngram is not None else None
    return Index(
        catalog=catalog, config=cfg, classifier=classifier or load_classifier(), security=security,
        authorized=AuthorizedSets(security), lexical=lexical, ngram=ngram, alias=alias, embedding=embedding,
        is_core=np.array([t.is_core for t in catalog.tools], dtype=bool), name_rank=name_rank,
        config_hash=cfg.hash, kernels=loops,
    )


def _text_indexes(columns: TextColumns, cfg: RankerConfig) -> tuple[LexicalIndex, NgramIndex | None]:
    """The BM25F and n-gram indexes, each field tokenised once for both (one column alive at a time)."""
    n = len(columns)
    lexical = LexicalBuilder(n, cfg.bm25.k1, cfg.bm25.b, cfg.text.stem)
    weights = {f: w for f, w in cfg.fields.items() if w > 0}
    ngram_fields: tuple[str, ...] = ()
    ngram = None
    if cfg.weight("ngram") or cfg.weight("prior") or cfg.abstain.min_ngram:
        ngram_fields = ALL_FIELDS if n <= cfg.ngram.long_fields_max_tools else SHORT_FIELDS
        ngram = NgramBuilder(n, cfg.ngram.lo, cfg.ngram.hi, columns=n < cfg.retrieval.min_tools)  # ranked whole
    table = RawTokens()
    names = list(dict.fromkeys([*weights, *ngram_fields]))  # config order: lexical term ids depend on it
    per_pass = max(1, CHUNK_TEXTS // max(n, 1))  # fields tokenised together: one chunk of texts in all
    for at in range(0, len(names), per_pass):
        batch = names[at:at + per_pass]
        tokens = columns_token_ids([columns.pieces(f) for f in batch], table)
        release_memory(n)  # the tokeniser's garbage (pieces, token strings) back to the OS before the cells grow
        for name, (ids, ptr) in zip(batch, tokens, strict=True):
            if name in weights:
                lexical.add(weights[name], ids, ptr, table)
            if ngram is not None and name in ngram_fields:
                ngram.add(ids, ptr)
        del ids, ptr, tokens
        release_memory(n)
    raw = table.names() if ngram is not None else []
    del table
    grams = ngram.finish(raw) if ngram is not None else None  # before the BM25F cells exist: lower peak
    del raw
    lex = lexical.finish()
    release_memory(n)
    return lex, grams


def _embedding_index(catalog: Catalog, encoder: Any = None) -> Any:
    """The semantic tier, from the optional extra; a clear error when it is absent.

    Pass a shared ``SemanticEncoder`` to reuse a loaded model and its vectors across
    engines (config sweeps, catalog reloads).
    """
    try:
        from tooldisc.discovery.indexes.embedding import build_embedding_index
    except ImportError as exc:
        from tooldisc.errors import MissingExtraError

        raise MissingExtraError("the 'embedding' ranking feature", "semantic", str(exc.name or "embedding")) from None
    return build_embedding_index(catalog.tools, encoder)
