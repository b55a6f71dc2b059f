"""Alias and keyword matching: how much of a tool's own phrase the query contains.

Aliases are curated phrases ("sales bill", "فاکتور فروش"); a query that contains one
whole is strong evidence. Stored as an alias × term incidence matrix so a query costs
one column gather, whatever the catalog size.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tooldisc.discovery.indexes.sparse import gather_columns, stable_argsort
from tooldisc.discovery.model import Tool
from tooldisc.discovery.text.columns import RawTokens, token_ids
from tooldisc.discovery.text.fields import terms_of_tokens
from tooldisc.memory import gc_paused


@dataclass(frozen=True)
class AliasIndex:
    vocab: dict[str, int]
    col_ptr: np.ndarray
    col_rows: np.ndarray  # alias ids
    col_data: np.ndarray
    alias_len: np.ndarray  # distinct terms per alias
    alias_tool: np.ndarray  # tool of each alias
    n_tools: int
    stem: bool = True

    @classmethod
    def build(cls, tools: Sequence[Tool], stem: bool = True) -> AliasIndex:
        """Every alias and keyword of every tool, as (term, alias) incidence columns.

        Phrases are tokenised once per distinct phrase and raw tokens mapped to terms once
        (see :func:`~tooldisc.discovery.text.columns.token_ids`); term ids are numbered in
        first-occurrence order over (tool, phrase, term), as a per-phrase loop would.
        """
        with gc_paused():
            return cls._build(tools, stem)

    @classmethod
    def _build(cls, tools: Sequence[Tool], stem: bool) -> AliasIndex:
        phrases = [p for t in tools for p in (*t.aliases, *t.keywords)]
        owner = np.repeat(np.arange(len(tools), dtype=np.int64),
                          np.fromiter((len(t.aliases) + len(t.keywords) for t in tools), np.int64, len(tools)))
        table = RawTokens()
        ids, ptr = token_ids(phrases, table)
        del phrases
        names = table.names()
        term_of: dict[str, int] = {}  # provisional ids, renumbered below
        raw_term = np.full(len(names), -1, dtype=np.int64)
        for raw in np.unique(ids).tolist():
            for term in terms_of_tokens([names[raw]], stem):  # [] for a stop word
                raw_term[raw] = term_of.setdefault(term, len(term_of))
        terms_ = raw_term[ids]
        phrase = np.repeat(np.arange(len(ptr) - 1, dtype=np.int64), np.diff(ptr))
        keep = terms_ >= 0
        terms_, phrase = terms_[keep], phrase[keep]
        del ids, keep
        firsts, first_at = np.unique(terms_, return_index=True)
        by_first = firsts[np.argsort(first_at)]
        renumber = np.empty(len(term_of), dtype=np.int64)
        renumber[by_first] = np.arange(len(by_first))
        provisional = list(term_of)
        vocab = {provisional[j]: i for i, j in enumerate(by_first.tolist())}
        v = max(len(vocab), 1)
        cells = np.unique(phrase * v + renumber[terms_])  # distinct terms per phrase, phrases in order
        cell_phrase, cell_term = cells // v, cells % v
        del cells, terms_, phrase
        used, alias_of_cell, lengths = np.unique(cell_phrase, return_inverse=True, return_counts=True)
        by_term = stable_argsort(cell_term, v)
        cols = cell_term[by_term]
        rows = alias_of_cell[by_term].astype(np.int32)
        col_ptr = np.zeros(len(vocab) + 1, dtype=np.int64)
        np.cumsum(np.bincount(cols, minlength=len(vocab)), out=col_ptr[1:])
        return cls(vocab, col_ptr, rows, np.ones(len(rows), dtype=np.float32),
                   lengths.astype(np.float32), owner[used], len(tools), stem)

    def scores(self, tokens: Sequence[str]) -> np.ndarray:
        """Per tool: the best share of one alias's terms found in the query (0..1)."""
        out = np.zeros(self.n_tools, dtype=np.float32)
        ids = sorted({self.vocab[w] for w in terms_of_tokens(list(tokens), self.stem) if w in self.vocab})
        if not ids or not len(self.alias_len):
            return out
        hits = gather_columns(self.col_ptr, self.col_rows, self.col_data, np.asarray(ids, dtype=np.int64),
                              np.ones(len(ids)), len(self.alias_len))
        share = hits / self.alias_len
        # Single-word aliases match by one token; weigh them below a whole multi-word phrase.
        share = np.where(self.alias_len > 1, share, share * 0.8)
        np.maximum.at(out, self.alias_tool, share.astype(np.float32))
        return out
