"""Column-wise tokenising for index builds over up to 100,000 tools.

Index builders read one field of every tool as one column
(:class:`tooldisc.discovery.text.fields.TextColumns`), tokenise each distinct piece of
text once, and keep token occurrences only as int32 arrays; the garbage collector is
paused and freed heap returned to the OS between phases. The tokens equal per-text
:func:`tooldisc.discovery.text.tokenize` exactly (tested).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from functools import lru_cache
from itertools import chain, islice

import numpy as np

from tooldisc.discovery.indexes.sparse import ranges
from tooldisc.discovery.text import normalize, tokenize


@lru_cache(maxsize=1)
def _libc_trim() -> Callable[[int], int] | None:
    try:
        import ctypes

        # the process's own symbols, libc's among them: find_library would run ldconfig in a subprocess
        return ctypes.CDLL(None).malloc_trim  # glibc only
    except (OSError, AttributeError, TypeError):
        return None


_TRIM_MIN_TOOLS = 2048


def release_memory(tools: int | None = None) -> None:
    """Hand freed heap pages back to the OS between build phases (glibc; a no-op elsewhere).

    A phase frees tens of MB of arrays and strings that glibc keeps in its heap once its
    mmap threshold has risen; without a trim each later phase grows the process instead
    of reusing them, and the build's peak RSS is the sum of its phases. A build over
    fewer than ``_TRIM_MIN_TOOLS`` tools (``tools``) frees too little to matter, and a
    trim walks the whole heap: a dozen of them were a sixth of a tiny catalog's build.
    """
    if tools is not None and tools < _TRIM_MIN_TOOLS:
        return
    trim = _libc_trim()
    if trim is not None:
        trim(0)


_MARK = "\x00"
_JOIN = " \x00 "
# ASCII fast path of tokenize: after ``lower`` (== NFKC + folding + casefold on ASCII),
# every non-alphanumeric ASCII character (``_`` included) is a separator. NUL, the piece
# boundary, maps to itself so the table stays 1:1 (CPython's fast ASCII translate).
_ASCII_SPLIT = str.maketrans({c: " " for c in range(1, 128) if not chr(c).isalnum()})
_WORD_OR_MARK = re.compile(r"\w+|\x00", re.UNICODE)
_BATCH_PIECES = 8192


class _Numbering(dict[str, int]):
    """Key → id in first-seen order: a lookup of an unseen key adds it (``__missing__``), so
    numbering a batch is one C-level ``map`` with no separate pass for new keys."""

    def __missing__(self, key: str) -> int:
        self[key] = i = len(self)
        return i


class RawTokens(_Numbering):
    """Raw token → id, numbered from 1 in first-seen order; id 0 is the piece-boundary mark."""

    def __init__(self) -> None:
        super().__init__({_MARK: 0})

    def names(self) -> list[str]:
        """Token of each id (index 0 is the mark)."""
        return list(self)


def token_ids(texts: Sequence[str] | Sequence[tuple[str, ...]], table: RawTokens) -> tuple[np.ndarray, np.ndarray]:
    """Raw token ids of every text (``tokenize``, stop words kept) as flat int32 ids and int64 offsets.

    ``table`` maps raw tokens to ids (from 1) and grows across calls. Texts are cut
    into pieces at sentence ends (``". "``) and list-item joins (``" \\n "``) — ASCII
    separators and NFKC starters, so pieces tokenise independently — and each distinct
    piece (a sentence, an alias, a keyword) is tokenised once; a text given as a tuple
    is already its pieces (a list field's items, as if joined by ``" \\n "``). ASCII pieces take
    ``lower``/``translate``/``split`` instead of NFKC and a regex. Texts go through in
    chunks, so no Python object per piece or token occurrence outlives a chunk.
    """
    return columns_token_ids([texts], table)[0]


def columns_token_ids(columns: Sequence[Sequence[str] | Sequence[tuple[str, ...]]],
                      table: RawTokens) -> list[tuple[np.ndarray, np.ndarray]]:
    """:func:`token_ids` of several columns (fields) in one pass: the same ids, numbered as if
    each column were tokenised after the previous one.

    A build over a small catalog then makes one pass of numpy calls instead of one per
    field; pass columns together only while they fit one chunk (:data:`CHUNK_TEXTS` texts
    in all), so a large column's memory bound is unchanged.
    """
    sizes = [len(c) for c in columns]
    out: list[tuple[np.ndarray, np.ndarray]] = []
    if not any(any(c) for c in columns):  # no column filled (most fields of a small catalog): no tokens, no work
        return [(np.zeros(0, dtype=np.int32), np.zeros(n + 1, dtype=np.int64)) for n in sizes]
    if len(columns) > 1 and sum(sizes) > CHUNK_TEXTS:
        raise ValueError(f"columns tokenised together must hold at most {CHUNK_TEXTS} texts in all")
    texts: Sequence[str] | Sequence[tuple[str, ...]] = (columns[0] if len(columns) == 1
                                                        else list(chain.from_iterable(columns)))
    # the column of each distinct text's first occurrence: new tokens are numbered column by column
    group = np.repeat(np.arange(len(columns), dtype=np.int64), sizes) if len(columns) > 1 else None
    distinct = list(dict.fromkeys(texts))  # capability, domains, parameters: a few hundred texts
    text_codes = None
    if len(distinct) < len(texts):
        index = {t: i for i, t in enumerate(distinct)}
        text_codes = np.fromiter(map(index.__getitem__, texts), dtype=np.int64, count=len(texts))
        del index
        if group is not None:
            first = np.full(len(distinct), len(texts), dtype=np.int64)
            np.minimum.at(first, text_codes, np.arange(len(texts)))
            group = group[first]
        texts = distinct
    del distinct
    piece_of = _Numbering()
    piece_ids = np.zeros(0, dtype=np.int32)
    piece_len = np.zeros(0, dtype=np.int64)
    id_parts: list[np.ndarray] = []
    len_parts: list[np.ndarray] = []
    for lo in range(0, len(texts), CHUNK_TEXTS):
        if len(piece_of) > _MAX_PIECES:  # mostly unique pieces: stop remembering them (ids restart)
            piece_of.clear()
            piece_ids, piece_len = piece_ids[:0], piece_len[:0]
        chunk = texts[lo:lo + CHUNK_TEXTS]
        # a text is pieces already (a tuple) or one string split at sentence breaks; columns passed
        # together may mix the two
        split = [t if isinstance(t, tuple) else t.replace(" \n ", ". ").split(". ") for t in chunk]
        del chunk
        n_pieces = np.fromiter(map(len, split), dtype=np.int64, count=len(split))
        flat = list(chain.from_iterable(split))
        del split
        known = len(piece_of)
        codes = np.fromiter(map(piece_of.__getitem__, flat), dtype=np.int64, count=len(flat))  # numbers new pieces
        del flat
        new = list(islice(piece_of, known, None))  # this chunk's new pieces, in first-seen order
        new_group = None
        if group is not None and len(new):  # each new piece's column: that of its first text
            owner = np.repeat(group[lo:lo + CHUNK_TEXTS], n_pieces)
            first = np.full(len(new), len(codes), dtype=np.int64)
            local = codes - known
            fresh = np.flatnonzero(local >= 0)
            np.minimum.at(first, local[fresh], fresh)
            new_group = owner[first]
        new_ids, new_len = _tokenize_pieces(new, table, new_group)
        del new
        piece_ids = np.concatenate([piece_ids, new_ids])
        piece_len = np.concatenate([piece_len, new_len])
        ids, occ_len = _expand(piece_ids, piece_len, codes)
        id_parts.append(ids)
        occ_before = np.zeros(len(occ_len) + 1, dtype=np.int64)
        np.cumsum(occ_len, out=occ_before[1:])
        text_end = np.cumsum(n_pieces)
        len_parts.append(occ_before[text_end] - occ_before[text_end - n_pieces])
        del ids, occ_len, occ_before, codes
    del piece_of, piece_ids, piece_len
    ids = np.empty(sum(map(len, id_parts)), dtype=np.int32)  # filled part by part: never two full copies
    at = 0
    for part in _drain(id_parts):
        ids[at:at + len(part)] = part
        at += len(part)
    lens = np.concatenate(len_parts) if len_parts else np.zeros(0, dtype=np.int64)
    if text_codes is not None:
        ids, lens = _expand(ids, lens, text_codes)
    ptr = np.zeros(len(lens) + 1, dtype=np.int64)
    np.cumsum(lens, out=ptr[1:])
    start = 0
    for n in sizes:  # each column's ids and offsets (views of the whole)
        part = ptr[start:start + n + 1]
        out.append((ids[part[0]:part[-1]], part - part[0] if start else part))
        start += n
    return out


def _drain(parts: list[np.ndarray]) -> Iterator[np.ndarray]:
    """The parts in order, each dropped from ``parts`` as it is handed out."""
    parts.reverse()
    while parts:
        yield parts.pop()


CHUNK_TEXTS = 16384
_MAX_PIECES = 65536


def _expand(ids: np.ndarray, lens: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Token ids and counts of a sequence of items given those of its distinct items."""
    start = np.zeros(len(lens), dtype=np.int64)
    np.cumsum(lens[:-1], out=start[1:])
    occ = lens[codes]
    return ids[ranges(start[codes], occ)], occ


def _tokenize_pieces(pieces: list[str], table: RawTokens,
                     group: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Token ids of distinct pieces (flat, in piece order) and the token count of each piece.

    New tokens are numbered group by group (``group``: each piece's column, ascending from
    0), within a group ASCII pieces first: what one call per column would number.
    """
    is_ascii = np.fromiter(map(str.isascii, pieces), dtype=bool, count=len(pieces))
    key = (~is_ascii).astype(np.int64)  # ASCII first
    if group is not None:
        key = group * 2 + key
    order = np.argsort(key, kind="stable")
    bounds = np.flatnonzero(np.diff(key[order])) + 1
    done: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # (piece indices, their lengths, their ids)
    for idx in np.split(order, bounds) if len(order) else ():
        flag = bool(is_ascii[idx[0]])
        for s in range(0, len(idx), _BATCH_PIECES):
            sel = idx[s:s + _BATCH_PIECES]
            tokens = _batch_tokens([pieces[i] for i in sel.tolist()], flag)
            tid = np.fromiter(map(table.__getitem__, tokens), dtype=np.int32, count=len(tokens))
            del tokens
            mark = tid == 0
            owner = np.cumsum(mark, dtype=np.int64)[~mark]
            done.append((sel, np.bincount(owner, minlength=len(sel)), tid[~mark]))
    lens = np.zeros(len(pieces), dtype=np.int64)
    for sel, sel_len, _ in done:
        lens[sel] = sel_len
    start = np.zeros(len(pieces), dtype=np.int64)
    np.cumsum(lens[:-1], out=start[1:])
    out = np.empty(int(lens.sum()), dtype=np.int32)
    for sel, sel_len, tid in done:
        out[ranges(start[sel], sel_len)] = tid
    return out, lens


def _batch_tokens(batch: list[str], ascii_only: bool) -> list[str]:
    """Tokens of ``batch`` with a NUL token between consecutive pieces (``tokenize`` per piece)."""
    joined = _JOIN.join(batch)
    if joined.count(_MARK) != len(batch) - 1:  # a piece holds NUL itself: a separator either way
        joined = _JOIN.join(p.replace(_MARK, " ") for p in batch)
    if ascii_only:
        return joined.lower().translate(_ASCII_SPLIT).split()
    tokens = _WORD_OR_MARK.findall(normalize(joined).replace("_", " "))
    if tokens.count(_MARK) != len(batch) - 1:  # NFKC never creates or merges NUL; guard anyway
        tokens = []
        for i, p in enumerate(batch):
            if i:
                tokens.append(_MARK)
            tokens.extend(tokenize(p.replace(_MARK, " ")))
    return tokens


