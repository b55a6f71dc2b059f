"""Column-wise text processing for index builds over up to 100,000 tools.

Index builders read one field of every tool as one column, tokenise each distinct
piece of text once, and keep token occurrences only as int32 arrays; the garbage
collector is paused and freed heap returned to the OS between phases. The results
equal per-tool :func:`tooldisc.discovery.fields.terms` exactly (tested).
"""

from __future__ import annotations

import gc
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from itertools import chain

import numpy as np
from tooldisc.discovery.fields import _param_text
from tooldisc.discovery.model import Tool
from tooldisc.discovery.text import _CAMEL, _NAME_SEPARATORS, normalize, split_name, tokenize

_SEP = "\x1e"
_ASCII_UPPER = re.compile("[A-Z]")


def normalized_column(texts: Sequence[str]) -> list[str]:
    """:func:`normalize` many texts in one pass (``_`` folded to a space, as in tokenize)."""
    joined = _SEP.join(t.replace(_SEP, " ") for t in texts)
    parts = normalize(joined).replace("_", " ").split(_SEP)
    if len(parts) != len(texts):  # NFKC never merges the separator; guard anyway
        return [normalize(t).replace("_", " ") for t in texts]
    return parts


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while an index is built.

    Builds allocate hundreds of thousands of short-lived lists and dicts and no cycles;
    each allocation burst would otherwise trigger collections that walk every live
    tool record (20× slower per-tool loops at 100k tools). Re-entrant.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


@lru_cache(maxsize=1)
def _libc_trim() -> Callable[[int], int] | None:
    try:
        import ctypes
        import ctypes.util

        name = ctypes.util.find_library("c")
        return ctypes.CDLL(name).malloc_trim if name else None  # glibc only
    except (OSError, AttributeError):
        return None


def release_memory() -> None:
    """Hand freed heap pages back to the OS between build phases (glibc; a no-op elsewhere).

    A phase frees tens of MB of arrays and strings that glibc keeps in its heap once its
    mmap threshold has risen; without a trim each later phase grows the process instead
    of reusing them, and the build's peak RSS is the sum of its phases.
    """
    trim = _libc_trim()
    if trim is not None:
        trim(0)


def field_columns(tools: Sequence[Tool], fields: Sequence[str]) -> dict[str, list[str]]:
    """``[field_texts(t)[f] for t in tools]`` for each of ``fields``, without a dict per tool.

    The index builders' view of :func:`field_texts` (same strings; unknown fields are
    empty): ``split_name`` runs once per distinct capability, domain list and parameter
    schema (variants of a tool share them), and over all names as one joined string.
    """
    n = len(tools)
    out: dict[str, list[str]] = {}
    for f in fields:
        if f in out:
            continue
        if f == "name":
            out[f] = _split_names([t.name for t in tools])
        elif f in ("aliases", "keywords", "examples"):
            out[f] = [" \n ".join(getattr(t, f)) for t in tools]
        elif f == "description":
            out[f] = [t.description for t in tools]
        elif f == "capability":
            caps: dict[str, str] = {}
            out[f] = [caps[c] if c in caps else caps.setdefault(c, split_name(c))
                      for c in (t.capability or "" for t in tools)]
        elif f == "domains":
            one: dict[str, str] = {}
            doms: dict[tuple[str, ...], str] = {}
            out[f] = [doms[d] if d in doms else doms.setdefault(
                d, " ".join(one[x] if x in one else one.setdefault(x, split_name(x)) for x in d))
                for d in (t.domains for t in tools)]
        elif f == "parameters":
            by_id: dict[int, str] = {}  # the schemas outlive this call, so their ids are stable keys
            out[f] = [by_id[id(p)] if id(p) in by_id else by_id.setdefault(id(p), _param_text(p))
                      for p in (t.parameters for t in tools)]
        else:
            out[f] = [""] * n
    return out


def _split_names(names: list[str]) -> list[str]:
    """``split_name`` of many names in two regex passes over one joined string.

    NUL is in neither separator class nor either side of a camel-case boundary, so no
    match can touch it and splitting back gives each name's own result.
    """
    joined = "\x00".join(names)
    spaced = _NAME_SEPARATORS.sub(" ", joined)
    # The camel-case pattern needs an ASCII capital on one side; lowercase names skip its slow scan.
    parts = (_CAMEL.sub(" ", spaced) if _ASCII_UPPER.search(spaced) else spaced).split("\x00")
    if len(parts) != len(names):  # a name held a NUL itself
        return [split_name(x) for x in names]
    return parts


_MARK = "\x00"
_JOIN = " \x00 "
# ASCII fast path of tokenize: after ``lower`` (== NFKC + folding + casefold on ASCII),
# every non-alphanumeric ASCII character (``_`` included) is a separator. NUL, the piece
# boundary, maps to itself so the table stays 1:1 (CPython's fast ASCII translate).
_ASCII_SPLIT = str.maketrans({c: " " for c in range(1, 128) if not chr(c).isalnum()})
_WORD_OR_MARK = re.compile(r"\w+|\x00", re.UNICODE)
_BATCH_PIECES = 8192


class RawTokens(dict[str, int]):
    """Raw token → id, numbered from 1 in first-seen order; id 0 is the piece-boundary mark.

    A lookup of an unseen token adds it (``__missing__``), so mapping a batch of tokens
    to ids is one C-level ``map`` with no separate pass for new tokens.
    """

    def __init__(self) -> None:
        super().__init__({_MARK: 0})

    def __missing__(self, token: str) -> int:
        self[token] = i = len(self)
        return i

    def names(self) -> list[str]:
        """Token of each id (index 0 is the mark)."""
        return list(self)


def token_ids(texts: Sequence[str], table: RawTokens) -> tuple[np.ndarray, np.ndarray]:
    """Raw token ids of every text (``tokenize``, stop words kept) as flat int32 ids and int64 offsets.

    ``table`` maps raw tokens to ids (from 1) and grows across calls. Texts are cut
    into pieces at sentence ends (``". "``) and list-item joins (``" \\n "``) — ASCII
    separators and NFKC starters, so pieces tokenise independently — and each distinct
    piece (a sentence, an alias, a keyword) is tokenised once. ASCII pieces take
    ``lower``/``translate``/``split`` instead of NFKC and a regex. Texts go through in
    chunks, so no Python object per piece or token occurrence outlives a chunk.
    """
    distinct = list(dict.fromkeys(texts))  # capability, domains, parameters: a few hundred texts
    text_codes = None
    if len(distinct) < len(texts):
        index = {t: i for i, t in enumerate(distinct)}
        text_codes = np.fromiter(map(index.__getitem__, texts), dtype=np.int64, count=len(texts))
        del index
        texts = distinct
    del distinct
    piece_of: dict[str, int] = {}
    piece_ids = np.zeros(0, dtype=np.int32)
    piece_len = np.zeros(0, dtype=np.int64)
    id_parts: list[np.ndarray] = []
    len_parts: list[np.ndarray] = []
    for lo in range(0, len(texts), _CHUNK_TEXTS):
        if len(piece_of) > _MAX_PIECES:  # mostly unique pieces: stop remembering them (ids restart)
            piece_of.clear()
            piece_ids, piece_len = piece_ids[:0], piece_len[:0]
        split = [t.replace(" \n ", ". ").split(". ") for t in texts[lo:lo + _CHUNK_TEXTS]]
        n_pieces = np.fromiter(map(len, split), dtype=np.int64, count=len(split))
        flat = list(chain.from_iterable(split))
        del split
        new = [piece for piece in dict.fromkeys(flat) if piece not in piece_of]
        piece_of.update(zip(new, range(len(piece_of), len(piece_of) + len(new)), strict=True))
        new_ids, new_len = _tokenize_pieces(new, table)
        del new
        piece_ids = np.concatenate([piece_ids, new_ids])
        piece_len = np.concatenate([piece_len, new_len])
        codes = np.fromiter(map(piece_of.__getitem__, flat), dtype=np.int64, count=len(flat))
        del flat
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
    return ids, ptr


def _drain(parts: list[np.ndarray]) -> Iterator[np.ndarray]:
    """The parts in order, each dropped from ``parts`` as it is handed out."""
    parts.reverse()
    while parts:
        yield parts.pop()


_CHUNK_TEXTS = 16384
_MAX_PIECES = 65536


def _expand(ids: np.ndarray, lens: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Token ids and counts of a sequence of items given those of its distinct items."""
    start = np.zeros(len(lens), dtype=np.int64)
    np.cumsum(lens[:-1], out=start[1:])
    occ = lens[codes]
    return ids[ranges(start[codes], occ)], occ


def _tokenize_pieces(pieces: list[str], table: RawTokens) -> tuple[np.ndarray, np.ndarray]:
    """Token ids of distinct pieces (flat, in piece order) and the token count of each piece."""
    is_ascii = np.fromiter(map(str.isascii, pieces), dtype=bool, count=len(pieces))
    done: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # (piece indices, their lengths, their ids)
    for flag in (True, False):
        idx = np.flatnonzero(is_ascii == flag)
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


def ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """``concatenate([arange(s, s + l) for s, l in zip(starts, lengths)])`` without a loop."""
    lengths = np.asarray(lengths, dtype=np.int64)
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.asarray(starts, dtype=np.int64)
    # int32 positions when they fit: these arrays are as long as the occurrences they index
    dtype = np.int32 if int(starts.max(initial=0)) + total < 2**31 else np.int64
    out = np.repeat((starts - np.cumsum(lengths) + lengths).astype(dtype), lengths)
    out += np.arange(total, dtype=dtype)
    return out


def stable_argsort(keys: np.ndarray, n_keys: int) -> np.ndarray:
    """Stable argsort of small non-negative ints by LSD radix passes over 16-bit digits.

    NumPy sorts ``uint16`` stably by radix (linear); wider ints go to timsort.
    """
    if n_keys <= 1 << 16:
        return np.argsort(keys.astype(np.uint16), kind="stable")
    order = np.argsort((keys & 0xFFFF).astype(np.uint16), kind="stable")
    shift = 16
    while n_keys > 1 << shift:
        digit = ((keys[order] >> shift) & 0xFFFF).astype(np.uint16)
        order = order[np.argsort(digit, kind="stable")]
        shift += 16
    return order


_BLOCK_TOOLS = 8192


def _cells(fields: list[tuple[np.ndarray, np.ndarray, np.ndarray]], lo: int, hi: int,
           n_terms: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(cells per term, tool of each cell, Σ field norm) for tools ``lo:hi``, cells in (term, tool) order.

    Occurrences are laid out tool-major with fields in order inside a tool, so the stable
    sort by term leaves each cell's occurrences in (field, position) order: the float64
    sum adds the same values in the same order as a per-tool loop.
    """
    size = hi - lo
    per_field = [np.diff(offsets[lo:hi + 1]) for _, offsets, _ in fields]
    per_tool = np.sum(per_field, axis=0)
    start = np.zeros(size, dtype=np.int64)
    np.cumsum(per_tool[:-1], out=start[1:])
    total = int(per_tool.sum())
    terms_ = np.empty(total, dtype=np.int32)
    vals = np.empty(total, dtype=np.float32)
    for (term_ids, offsets, norm), lens in zip(fields, per_field, strict=True):
        pos = ranges(start, lens)
        terms_[pos] = term_ids[offsets[lo]:offsets[hi]]
        vals[pos] = np.repeat(norm[lo:hi], lens)
        start += lens
    docs = np.repeat(np.arange(lo, hi, dtype=np.int32), per_tool)
    order = stable_argsort(terms_, n_terms)
    terms_, docs, vals = terms_[order], docs[order], vals[order]
    del order
    new = np.ones(total, dtype=bool)
    new[1:] = (terms_[1:] != terms_[:-1]) | (docs[1:] != docs[:-1])
    starts = np.flatnonzero(new)
    del new
    tfw = np.add.reduceat(vals.astype(np.float64), starts) if total else np.zeros(0)
    return np.bincount(terms_[starts], minlength=n_terms), docs[starts], tfw
