"""Alias and keyword matching: how much of a tool's own phrase the query contains.

Aliases are curated phrases ("sales bill", "فاکتور فروش"); a query that contains one
whole is strong evidence. Stored as an alias × term incidence matrix so a query costs
one column gather, whatever the catalog size.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from tooldisc.discovery.lexical import terms
from tooldisc.discovery.model import Tool
from tooldisc.discovery.text import gather_columns


@dataclass(frozen=True)
class AliasIndex:
    vocab: dict[str, int]
    col_ptr: np.ndarray
    col_rows: np.ndarray  # alias ids
    col_data: np.ndarray
    alias_len: np.ndarray  # distinct terms per alias
    alias_tool: np.ndarray  # tool of each alias
    n_tools: int

    @classmethod
    def build(cls, tools: Sequence[Tool]) -> AliasIndex:
        vocab: dict[str, int] = {}
        pairs: list[tuple[int, int]] = []
        lengths: list[int] = []
        owners: list[int] = []
        for t_idx, tool in enumerate(tools):
            for phrase in (*tool.aliases, *tool.keywords):
                ids = sorted({vocab.setdefault(w, len(vocab)) for w in terms(phrase)})
                if not ids:
                    continue
                a = len(lengths)
                lengths.append(len(ids))
                owners.append(t_idx)
                pairs.extend((j, a) for j in ids)
        pairs.sort()
        cols = np.array([p[0] for p in pairs], dtype=np.int64)
        rows = np.array([p[1] for p in pairs], dtype=np.int32)
        col_ptr = np.zeros(len(vocab) + 1, dtype=np.int64)
        np.cumsum(np.bincount(cols, minlength=len(vocab)), out=col_ptr[1:])
        return cls(vocab, col_ptr, rows, np.ones(len(rows), dtype=np.float32),
                   np.array(lengths, dtype=np.float32), np.array(owners, dtype=np.int64), len(tools))

    def scores(self, tokens: Sequence[str]) -> np.ndarray:
        """Per tool: the best share of one alias's terms found in the query (0..1)."""
        out = np.zeros(self.n_tools, dtype=np.float32)
        ids = sorted({self.vocab[w] for w in terms(" ".join(tokens)) if w in self.vocab})
        if not ids or not len(self.alias_len):
            return out
        hits = gather_columns(self.col_ptr, self.col_rows, self.col_data, np.asarray(ids, dtype=np.int64),
                              np.ones(len(ids)), len(self.alias_len))
        share = hits / self.alias_len
        # Single-word aliases match by one token; weigh them below a whole multi-word phrase.
        share = np.where(self.alias_len > 1, share, share * 0.8)
        np.maximum.at(out, self.alias_tool, share.astype(np.float32))
        return out
