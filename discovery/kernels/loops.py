"""The query's hot loops as numba compiles them: each one's numpy twin, with the same arguments and the
same bits, and the dispatch that chooses a form live in :mod:`tooldisc.discovery.kernels`.

Only the ``*_loop`` functions are here, apart from the dispatch, so that the ahead-of-time module's key
(:func:`.aot.key_parts`) covers the source of what is compiled and nothing else: an edit to the dispatch
leaves the compiled loops valid, an edit here (a loop may call anything in this file) rebuilds them. The
rules every loop keeps (one summation order, no fastmath, nothing transcendental) are in the dispatch
module's docstring; tests/discovery/test_kernels.py checks each loop against its twin bit for bit.
"""

from __future__ import annotations

import numpy as np

# --- Σⱼ weightⱼ · column ⱼ (BM25F scores, n-gram columns) -------------------------------------

def gather_loop(col_ptr: np.ndarray, col_rows: np.ndarray, col_data: np.ndarray, ids: np.ndarray,
                weights: np.ndarray, n_rows: int) -> np.ndarray:
    """:func:`gather_numpy` as one loop: each product as numpy forms it, added in the same order."""
    acc = np.zeros(n_rows, dtype=np.float64)
    for j in range(len(ids)):
        c = ids[j]
        w = weights[j]
        for p in range(col_ptr[c], col_ptr[c + 1]):
            acc[col_rows[p]] += np.float64(col_data[p] * w)
    return acc.astype(np.float32)


# --- candidate retrieval: rare n-gram estimate, fused score estimate, the two top lists ---------

def candidates_loop(lexical: np.ndarray, allowed: np.ndarray, ids: np.ndarray, wq: np.ndarray,
                    gram_ptr: np.ndarray, gram_tokens: np.ndarray, gram_counts: np.ndarray,
                    table: np.ndarray, token_ptr: np.ndarray, token_tools: np.ndarray,
                    token_counts: np.ndarray, divisors: np.ndarray, side_effect: np.ndarray, wanted: int,
                    w_bm25: float, w_ngram: float, w_prior: float, n: int) -> np.ndarray:
    """:func:`candidates_numpy` as loops: the same sums in the same order, and two bounded heaps
    (the N/2 best by BM25F, the N best by the estimate) instead of sorting every reached tool."""
    size = len(lexical)
    n_tokens = len(token_ptr) - 1
    per_token = np.zeros(n_tokens, dtype=np.float64)
    for q in range(len(ids)):
        g = ids[q]
        for p in range(gram_ptr[g], gram_ptr[g + 1]):
            per_token[gram_tokens[p]] += wq[q] * table[gram_counts[p]]
    sums = np.zeros(size, dtype=np.float64)
    for k in range(n_tokens):  # ascending tokens, as the numpy form's nonzero
        x = per_token[k]
        if x > 0:
            for p in range(token_ptr[k], token_ptr[k + 1]):
                sums[token_tools[p]] += table[token_counts[p]] * x
    # the reached tools (allowed, and a query term or rare n-gram reaches them) and the best BM25F
    # among the allowed, without a branch per tool: which tools are reached follows no pattern a
    # branch predictor could learn, and a mispredicted branch costs more than the work it skips
    reached = np.empty(size, dtype=np.int32)
    n_reached = 0
    top = np.float32(0.0)
    for i in range(size):
        lx = lexical[i]
        ok = allowed[i]
        seen = lx if ok else np.float32(0.0)
        top = seen if seen > top else top
        reached[n_reached] = i
        n_reached += ok & ((lx > 0) | (sums[i] > 0))
    # heap 0: the N/2 best BM25F; heap 1: the N best estimates. Each root is its worst kept
    # entry: a lower value, or an equal value and a later index.
    caps = np.array([n // 2, n], dtype=np.int64)
    sizes = np.zeros(2, dtype=np.int64)
    vals = np.empty((2, max(n, 1)), dtype=np.float64)
    idxs = np.empty((2, max(n, 1)), dtype=np.int64)
    offer = np.empty(2, dtype=np.float64)
    # what a value must exceed to enter each heap: 0 while it fills (positive values only), then its
    # root; most reached tools stop at this one comparison
    gate = np.array([0.0 if caps[0] else np.inf, 0.0 if caps[1] else np.inf])
    fb = np.float32(w_bm25)
    for j in range(n_reached):
        i = reached[j]
        lx = lexical[i]
        rare = sums[i] / divisors[i]
        lexn = lx / top if top > 0 else lx
        est = np.float64(fb * lexn) + w_ngram * rare
        if w_prior:
            est += (w_prior * (1.0 if side_effect[i] == wanted else 0.0)) * max(np.float64(lexn), rare)
        offer[0] = np.float64(lx)
        offer[1] = est
        for h in range(2):
            v = offer[h]
            if not v > gate[h]:
                continue
            cap = caps[h]
            m = sizes[h]
            if m < cap:  # sift up from a new leaf
                at = m
                sizes[h] = m + 1
                while at > 0:
                    parent = (at - 1) // 2
                    if v <= vals[h, parent]:  # i is the latest index: an equal value is worse
                        vals[h, at] = vals[h, parent]
                        idxs[h, at] = idxs[h, parent]
                        at = parent
                    else:
                        break
            else:  # better than the worst kept (equal loses: a later index)
                at = 0
                while True:  # sift down from the root
                    child = 2 * at + 1
                    if child >= m:
                        break
                    right = child + 1
                    if right < m and (vals[h, right] < vals[h, child] or (
                            vals[h, right] == vals[h, child] and idxs[h, right] > idxs[h, child])):
                        child = right
                    if vals[h, child] < v or (vals[h, child] == v and idxs[h, child] > i):
                        vals[h, at] = vals[h, child]
                        idxs[h, at] = idxs[h, child]
                        at = child
                    else:
                        break
            vals[h, at] = v
            idxs[h, at] = i
            if sizes[h] == cap:
                gate[h] = vals[h, 0]
    n_lex = sizes[0]
    n_est = sizes[1]
    # at most N entries each: insertion sorts (numba compiles numpy's sorts slowly)
    taken = idxs[0, :n_lex].copy()
    for a in range(1, n_lex):
        b = a
        while b > 0 and taken[b - 1] > taken[b]:
            taken[b - 1], taken[b] = taken[b], taken[b - 1]
            b -= 1
    ev = vals[1, :n_est].copy()  # the estimate's best first: value descending, index ascending
    ei = idxs[1, :n_est].copy()
    for a in range(1, n_est):
        b = a
        while b > 0 and (ev[b - 1] < ev[b] or (ev[b - 1] == ev[b] and ei[b - 1] > ei[b])):
            ev[b - 1], ev[b] = ev[b], ev[b - 1]
            ei[b - 1], ei[b] = ei[b], ei[b - 1]
            b -= 1
    out = np.empty(n_lex + n_est, dtype=np.int64)
    out[:n_lex] = taken
    m = n_lex
    for a in range(n_est):
        if m >= n:
            break
        i = ei[a]
        dup = False
        for b in range(n_lex):
            if taken[b] == i:
                dup = True
                break
        if not dup:
            out[m] = i
            m += 1
    out = out[:m]
    for a in range(1, m):
        b = a
        while b > 0 and out[b - 1] > out[b]:
            out[b - 1], out[b] = out[b], out[b - 1]
            b -= 1
    return out


# --- the n-gram counts some tools share with a query -----------------------------------------

_SHARED_SLACK = 1 << 14  # output entries (28 bytes each) shared_loop may allocate without counting them first


def shared_loop(tool_ptr: np.ndarray, tool_tokens: np.ndarray, tool_counts: np.ndarray,
                gram_ptr: np.ndarray, gram_tokens: np.ndarray, gram_counts: np.ndarray, n_tokens: int,
                indices: np.ndarray, ids: np.ndarray, table: np.ndarray, idf: np.ndarray, norms: np.ndarray,
                w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int, np.ndarray]:
    """:func:`shared_numpy` as loops: the query n-grams' postings chained by token (a list per token
    holding one, no pass over every token), then a tool at a time sums its tokens' lists (exact integers)
    and weighs each count as it is written (the same float64 operations, one float32 rounding)."""
    nq = len(ids)
    if nq == 0 or len(indices) == 0:
        return (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0), np.zeros(0, np.float32), 0,
                np.zeros(len(indices), np.float32))
    total = 0
    for a in range(nq):
        total += gram_ptr[ids[a] + 1] - gram_ptr[ids[a]]
    head = np.zeros(n_tokens, dtype=np.int32)  # 1 + the latest hit of each token (0: none)
    held = np.zeros(n_tokens, dtype=np.int32)  # hits per token
    nxt = np.empty(total, dtype=np.int32)
    hit_slot = np.empty(total, dtype=np.int32)
    hit_count = np.empty(total, dtype=np.float64)
    h = 0
    for a in range(nq):
        g = ids[a]
        for p in range(gram_ptr[g], gram_ptr[g + 1]):
            k = gram_tokens[p]
            hit_slot[h] = a
            hit_count[h] = np.float64(gram_counts[p])
            nxt[h] = head[k]
            h += 1
            head[k] = h
            held[k] += 1
    # entries out: at most nq per tool; a pass over the tools' tokens bounds them closer (at most one per
    # hit of a tool's token) only when that product is large (a whole block of tools: its memory counts)
    bound = len(indices) * nq
    if bound > _SHARED_SLACK:
        bound = 0
        for r in range(len(indices)):
            t = indices[r]
            here = 0
            for p in range(tool_ptr[t], tool_ptr[t + 1]):
                here += held[tool_tokens[p]]
            bound += min(here, nq)
    rows = np.empty(bound, dtype=np.int64)
    cols = np.empty(bound, dtype=np.int64)
    counts = np.empty(bound, dtype=np.float64)
    weights = np.empty(bound, dtype=np.float32)
    idf_q = np.empty(nq, dtype=np.float64)
    for a in range(nq):
        idf_q[a] = idf[ids[a]]
    acc = np.zeros(nq, dtype=np.float64)
    seen = np.zeros(nq, dtype=np.bool_)
    cos = np.empty(len(indices), dtype=np.float32)
    n_table = len(table)
    n_big = 0
    m = 0
    for r in range(len(indices)):
        t = indices[r]
        norm = norms[t]
        dot = 0.0
        for p in range(tool_ptr[t], tool_ptr[t + 1]):
            j = head[tool_tokens[p]]
            if j == 0:
                continue
            tc = np.float64(tool_counts[p])
            while j:
                acc[hit_slot[j - 1]] += tc * hit_count[j - 1]
                seen[hit_slot[j - 1]] = True
                j = nxt[j - 1]
        for a in range(nq):
            if seen[a]:
                seen[a] = False
                c = acc[a]
                if c > 0:
                    rows[m] = r
                    cols[m] = a
                    counts[m] = c
                    if c < n_table:
                        weights[m] = np.float32(table[np.int64(c)] * idf_q[a] / norm)
                    else:
                        weights[m] = np.float32(np.nan)
                        n_big += 1
                    dot += np.float64(weights[m] * w[a])
                    m += 1
                acc[a] = 0.0
        cos[r] = np.float32(dot)
    return rows[:m], cols[:m], counts[:m], weights[:m], n_big, cos


# --- a query's n-grams: packed keys looked up in the index's sorted keys --------------------

def query_grams_loop(points: np.ndarray, lengths: np.ndarray, alphabet: np.ndarray, codes: np.ndarray,
                     keys: np.ndarray, bits: int, lo: int, hi: int,
                     part: np.ndarray) -> tuple[np.ndarray, np.ndarray, int, np.ndarray, int]:
    """:func:`query_grams_numpy` as loops (int64 keys: alphabets up to 2^(63 // hi) characters)."""
    m = len(points)
    code = np.zeros(m, dtype=np.int64)
    for j in range(m):  # bisection (numba compiles np.searchsorted slowly)
        lo_, hi_ = 0, len(alphabet)
        while lo_ < hi_:
            mid = (lo_ + hi_) // 2
            if alphabet[mid] < points[j]:
                lo_ = mid + 1
            else:
                hi_ = mid
        if lo_ < len(alphabet) and alphabet[lo_] == points[j]:
            code[j] = codes[lo_]
    found = np.empty(max(m * (hi - lo + 1), 1), dtype=np.int64)
    n_found = 0
    total = 0
    total_part = 0
    start = 0
    n_keys = len(keys)
    for t in range(len(lengths)):
        n_chars = lengths[t]
        inside = part[t] != 0
        for n in range(lo, min(hi, n_chars) + 1):
            total += n_chars - n + 1
            if inside:
                total_part += n_chars - n + 1
        for i in range(n_chars - lo + 1):
            key = 0
            for length in range(1, min(hi, n_chars - i) + 1):
                c = code[start + i + length - 1]
                if c == 0:
                    break
                key = (key << bits) | c
                if length >= lo and n_keys:
                    pos, end = 0, n_keys
                    while pos < end:
                        mid = (pos + end) // 2
                        if keys[mid] < key:
                            pos = mid + 1
                        else:
                            end = mid
                    if pos < n_keys and keys[pos] == key:
                        found[n_found] = 2 * pos + (1 if inside else 0)  # the id and whether ``part`` holds it
                        n_found += 1
                    else:
                        # every longer n-gram from this start holds this one at the same place of the same
                        # padded token, so the catalog (which keeps every n-gram of its tokens) lacks it too
                        break
        start += n_chars
    known = found[:n_found]
    if n_found > 32:  # hundreds of n-grams (a long request): bottom-up merge passes instead of O(n²) swaps
        other = np.empty(n_found, dtype=np.int64)
        width = 1
        while width < n_found:
            for left in range(0, n_found, 2 * width):
                mid = min(left + width, n_found)
                right = min(left + 2 * width, n_found)
                x, y, z = left, mid, left
                while x < mid and y < right:
                    if known[y] < known[x]:
                        other[z] = known[y]
                        y += 1
                    else:
                        other[z] = known[x]
                        x += 1
                    z += 1
                while x < mid:
                    other[z] = known[x]
                    x += 1
                    z += 1
                while y < right:
                    other[z] = known[y]
                    y += 1
                    z += 1
            known, other = other, known
            width *= 2
    for a in range(1, n_found):  # a few dozen n-grams: an insertion sort (nothing left to move after the merges)
        b = a
        while b > 0 and known[b - 1] > known[b]:
            known[b - 1], known[b] = known[b], known[b - 1]
            b -= 1
    ids = np.empty(n_found, dtype=np.int64)
    tf = np.empty(n_found, dtype=np.int64)
    tf_part = np.empty(n_found, dtype=np.int64)
    d = 0
    for j in range(n_found):
        g = known[j] >> 1
        if d and ids[d - 1] == g:
            tf[d - 1] += 1
        else:
            ids[d] = g
            tf[d] = 1
            tf_part[d] = 0
            d += 1
        tf_part[d - 1] += known[j] & 1
    return ids[:d], tf[:d], total, tf_part[:d], total_part


# --- Σⱼ weightⱼ · cell (column ⱼ, row) at a few rows (the learned features' cell reads) -------
# The expansion and phrase-weight features read only the retrieved tools' cells of the query's
# columns. Their layouts keep each cell as one ascending key ``column · n_rows + row``
# (:func:`tooldisc.discovery.indexes.expansion.cell_keys`), so a cell is found by searching keys.

def rows_loop(keys: np.ndarray, data: np.ndarray, n_rows: int, ids: np.ndarray, weights: np.ndarray,
              indices: np.ndarray) -> np.ndarray:
    """:func:`rows_numpy` as one loop: per column, its first cell by bisection, then each row by galloping
    forward from the last (rows ascending); the same products added in the same order."""
    n_idx = len(indices)
    out = np.zeros(n_idx, dtype=np.float64)
    n_keys = len(keys)
    if len(ids) == 0 or n_idx == 0 or n_keys == 0:
        return out
    for a in range(len(ids)):
        base = np.int64(ids[a]) * np.int64(n_rows)
        w = np.float64(weights[a])
        lo = 0
        hi = n_keys
        while lo < hi:  # the column's first cell
            mid = (lo + hi) >> 1
            if np.int64(keys[mid]) < base:
                lo = mid + 1
            else:
                hi = mid
        for i in range(n_idx):
            key = base + np.int64(indices[i])
            if lo < n_keys and np.int64(keys[lo]) < key:
                prev = lo
                step = 1
                nxt = lo + 1
                while nxt < n_keys and np.int64(keys[nxt]) < key:
                    prev = nxt
                    step *= 2
                    nxt = lo + step
                lo = prev + 1
                hi = min(nxt, n_keys)
                while lo < hi:
                    mid = (lo + hi) >> 1
                    if np.int64(keys[mid]) < key:
                        lo = mid + 1
                    else:
                        hi = mid
            value = 0.0
            if lo < n_keys and np.int64(keys[lo]) == key:
                value = np.float64(data[lo]) * w
            out[i] += value  # a missing cell adds 0.0, as the numpy form does
    return out


# --- building the n-gram index: C = T·G, exact integer counts, in scipy's cell order -------------
# Not a query loop: the build's one sparse product, so that a process with the compiled module builds
# an index without importing scipy.sparse (0.15-0.25 s of a one-shot). Its twin is scipy's product.

def product_loop(a_ptr: np.ndarray, a_idx: np.ndarray, a_val: np.ndarray, b_ptr: np.ndarray,
                 b_idx: np.ndarray, b_val: np.ndarray, n_cols: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`product_numpy` (scipy's ``csr_matmat``) as its loops: per row, each column's products summed
    in float32 as they come, the row's columns listed last touched first (the order scipy's linked list
    gives), a zero sum dropped."""
    n_rows = len(a_ptr) - 1
    mark = np.full(n_cols, -1, dtype=np.int64)
    nnz = 0
    for i in range(n_rows):  # the number of cells (scipy's csr_matmat_maxnnz)
        for jj in range(a_ptr[i], a_ptr[i + 1]):
            j = a_idx[jj]
            for kk in range(b_ptr[j], b_ptr[j + 1]):
                k = b_idx[kk]
                if mark[k] != i:
                    mark[k] = i
                    nnz += 1
    c_ptr = np.zeros(n_rows + 1, dtype=np.int64)
    c_idx = np.empty(nnz, dtype=np.int64)
    c_val = np.empty(nnz, dtype=np.float32)
    nxt = np.full(n_cols, -1, dtype=np.int64)
    sums = np.zeros(n_cols, dtype=np.float32)
    at = 0
    for i in range(n_rows):
        head = -2
        length = 0
        for jj in range(a_ptr[i], a_ptr[i + 1]):
            j = a_idx[jj]
            v = a_val[jj]
            for kk in range(b_ptr[j], b_ptr[j + 1]):
                k = b_idx[kk]
                sums[k] += v * b_val[kk]
                if nxt[k] == -1:
                    nxt[k] = head
                    head = k
                    length += 1
        for _ in range(length):
            if sums[head] != 0:
                c_idx[at] = head
                c_val[at] = sums[head]
                at += 1
            temp = head
            head = nxt[head]
            nxt[temp] = -1
            sums[temp] = 0
        c_ptr[i + 1] = at
    return c_ptr, c_idx[:at], c_val[:at]
