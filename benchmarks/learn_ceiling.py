"""How far 5-fold CV on hesabix dev lets any honest method go (issue 13): the ceiling, with its method.

Usage: python benchmarks/learn_ceiling.py [--json]

Uses the folds of ``benchmarks/learn_quality.py`` (the same seeded split) and the default
ranking (no learned file). Three analyses, each an upper bound under a stated assumption:

1. **Indistinguishable requests.** Requests that are the same after normalisation (the
   tokens :func:`tooldisc.discovery.text.phrases.scrub` leaves: numbers, ids and punctuation
   cut; and a looser level: the same set of content words, stop words dropped) get the
   same ranking from any method that reads the request (and its history). For every
   group of such requests whose labels differ, the best single ranking is found by
   exhaustive search over the orderings of the group's labelled tools; every other
   request is assumed perfect. That is a strict bound at the first level and a bound for
   "any method that ignores word order and stop words" at the second.
2. **Per-tool evidence.** Expansions and phrase weights can only raise a tool that has
   labelled requests in the training folds (and are stored only when ``k`` = 3 distinct
   requests share a phrase). Requests whose primary tools have fewer than 1 (or 3)
   training requests keep their default figures; every other request is assumed fixed.
   An optimistic bound for per-tool learning (a global reweighting is not bounded by it).
3. **nDCG's acceptable tools.** nDCG@10 grades primary 2 and acceptable 1 (DESIGN §6), so a
   request with its primary first but its acceptable tools outside the top 10 scores
   2 / ideal. Given: nDCG@10 with the primary moved to rank 1 and everything else as the
   default ranks it; and how many requests need their acceptable tools placed too.

And for abstention: which matched requests the shipped model (features of the default
offer) scores as more tool-less than no-tool requests, and the best no-match success at
≤ 1 of 264 matched abstaining with the threshold chosen *in hindsight* on the pooled set.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "benchmarks"
DEPTH = 10
MAX_EXHAUSTIVE = 7  # tools a group's orderings are searched over exhaustively (7! = 5,040)
JACCARD = 0.5  # content-word overlap at which two requests count as near-duplicates


def _dcg(ranking: tuple[str, ...], primary: frozenset, acceptable: frozenset) -> float:
    return sum((2 if t in primary else 1 if t in acceptable else 0) / math.log2(i + 2)
               for i, t in enumerate(ranking[:DEPTH]))


def _ideal(primary: frozenset, acceptable: frozenset) -> float:
    gains = [2] * len(primary) + [1] * len(acceptable - primary)
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains[:DEPTH]))


def _measures(ranking: tuple[str, ...], primary: frozenset, acceptable: frozenset) -> dict[str, float]:
    top = ranking[:DEPTH]
    rr = next((1.0 / (i + 1) for i, t in enumerate(top) if t in primary), 0.0)
    return {"hit@10": float(any(t in primary for t in top)), "MRR": rr,
            "nDCG@10": _dcg(ranking, primary, acceptable) / _ideal(primary, acceptable)}


def _group_best(members: list) -> dict[str, float]:
    """Per member: the measures of the one ranking that maximises the group's summed (MRR, nDCG@10)."""
    tools = sorted({t for m in members for t in m.primary_expected_tools}
                   | {t for m in members for t in m.acceptable_tools})
    weight = Counter(t for m in members for t in m.primary_expected_tools)
    tools = sorted(tools, key=lambda t: (-weight[t], t))[:MAX_EXHAUSTIVE]
    best: dict[str, tuple[float, float]] = {}
    for measure in ("MRR", "nDCG@10"):
        top = -1.0
        for perm in itertools.permutations(tools):
            s = sum(_measures(perm, frozenset(m.primary_expected_tools), frozenset(m.acceptable_tools))[measure]
                    for m in members)
            top = max(top, s)
        best[measure] = top
    return {"MRR": best["MRR"], "nDCG@10": best["nDCG@10"], "hit@10": float(len(members))}


def _key_exact(q) -> tuple:
    from tooldisc.discovery.text.phrases import scrub

    hist = tuple(tuple(t for run in scrub(c) for t in run) for r, c in q.history if r == "user")
    return tuple(t for run in scrub(q.query) for t in run), hist


def _key_content(q) -> tuple:
    from tooldisc.discovery.text.fields import stopwords

    stop = stopwords()
    words, hist = _key_exact(q)
    return frozenset(t for t in words if t not in stop), tuple(frozenset(h) for h in hist)


def _indistinguishable(matched: list, fold: dict, key) -> dict:
    groups = defaultdict(list)
    for q in matched:
        groups[key(q)].append(q)
    conflicted = [g for g in groups.values() if len({tuple(sorted(q.primary_expected_tools)) for q in g}) > 1]
    totals = {"hit@10": float(len(matched)), "MRR": float(len(matched)), "nDCG@10": float(len(matched))}
    for g in conflicted:
        b = _group_best(g)
        for m in totals:
            totals[m] -= len(g) - b[m]
    return {"groups_with_conflicting_labels": len(conflicted),
            "requests_in_them": sum(len(g) for g in conflicted),
            "groups_spanning_folds": sum(len({fold[q.id] for q in g}) > 1 for g in conflicted),
            "examples": [[(q.query, list(q.primary_expected_tools)) for q in g] for g in conflicted[:6]],
            "bound": {m: round(v / len(matched), 4) for m, v in totals.items()}}


def _siblings(matched: list, fold: dict) -> dict:
    """Near-duplicates labelled the other way round: content words overlap by ``JACCARD`` or more, the
    primaries differ, and each request's primary is among the other's labelled tools. Connected
    requests are bounded as one group (the bound of a method that ranks them alike; not strict)."""
    keys = {q.id: _key_content(q)[0] for q in matched}
    parent = {q.id: q.id for q in matched}

    def root(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    pairs = across = 0
    for a, b in itertools.combinations(matched, 2):
        ka, kb = keys[a.id], keys[b.id]
        if not ka or not kb or len(ka & kb) / len(ka | kb) < JACCARD:
            continue
        pa, pb = set(a.primary_expected_tools), set(b.primary_expected_tools)
        if pa == pb or not (pa & (set(b.acceptable_tools) | pb)) or not (pb & (set(a.acceptable_tools) | pa)):
            continue
        pairs += 1
        across += fold[a.id] != fold[b.id]
        parent[root(a.id)] = root(b.id)
    groups = defaultdict(list)
    for q in matched:
        groups[root(q.id)].append(q)
    totals = {"hit@10": float(len(matched)), "MRR": float(len(matched)), "nDCG@10": float(len(matched))}
    multi = [g for g in groups.values() if len(g) > 1]
    for g in multi:
        b = _group_best(g)
        for m in totals:
            totals[m] -= len(g) - b[m]
    return {"jaccard": JACCARD, "pairs": pairs, "pairs_across_folds": across, "requests": sum(len(g) for g in multi),
            "examples": [[(q.query, list(q.primary_expected_tools)) for q in g] for g in multi[:4]],
            "bound_if_each_group_ranks_alike": {m: round(v / len(matched), 4) for m, v in totals.items()}}


def _per_tool(matched: list, fold: dict, default: dict) -> dict:
    out: dict = {}
    by_fold = defaultdict(Counter)
    for q in matched:
        by_fold[fold[q.id]].update(q.primary_expected_tools)
    seen = []
    for q in matched:
        train = Counter()
        for f, c in by_fold.items():
            if f != fold[q.id]:
                train.update(c)
        seen.append(min(train[t] for t in q.primary_expected_tools))
    seen = np.array(seen)
    ranks = np.array([default[q.id]["rank"] for q in matched])
    out["training_requests_of_primary_tool"] = {
        "0": int((seen == 0).sum()), "1-2": int(((seen >= 1) & (seen < 3)).sum()), ">=3": int((seen >= 3).sum())}
    out["not_first_by_default"] = {
        "0": int(((seen == 0) & (ranks != 1)).sum()), "1-2": int(((seen >= 1) & (seen < 3) & (ranks != 1)).sum()),
        ">=3": int(((seen >= 3) & (ranks != 1)).sum())}
    for need in (1, 3):
        fixable = seen >= need
        bound = {}
        for m in ("hit@10", "MRR", "nDCG@10"):
            v = np.array([default[q.id][m] for q in matched])
            bound[m] = round(float(np.where(fixable, 1.0, v).mean()), 4)
        out[f"bound_if_every_request_with_{need}+_training_requests_is_fixed"] = bound
    return out


def _acceptable(matched: list, default: dict) -> dict:
    primary_first = []
    for q in matched:
        p, a = frozenset(q.primary_expected_tools), frozenset(q.acceptable_tools)
        r = default[q.id]["ranking"]
        first = next((t for t in r if t in p), sorted(p)[0])
        moved = (first, *(t for t in r if t != first))
        primary_first.append(_measures(moved, p, a)["nDCG@10"])
    only_primary = [2 * len(q.primary_expected_tools[:1]) / _ideal(frozenset(q.primary_expected_tools),
                                                                 frozenset(q.acceptable_tools)) for q in matched]
    return {"with_acceptable_tools": sum(bool(set(q.acceptable_tools) - set(q.primary_expected_tools))
                                         for q in matched),
            "ndcg_primary_moved_first_rest_default": round(float(np.mean(primary_first)), 4),
            "ndcg_primary_first_and_no_acceptable_in_top10": round(float(np.mean(only_primary)), 4),
            "default_ndcg": round(float(np.mean([default[q.id]["nDCG@10"] for q in matched])), 4)}


def _abstention(gold, engine, ctx) -> dict:
    p = {q.id: engine.discover(q.query, ctx, DEPTH, q.history).confidence.probability for q in gold.queries}
    # learn never abstains on a request whose earlier turn matched a tool: leave those out
    matched = sorted((p[q.id], q.query) for q in gold.queries if q.matched and not q.history)  # low P(fits) first
    none = sorted(p[q.id] for q in gold.queries if q.no_match)
    # hindsight threshold: abstain when P(fits) < t; at most one matched request below t
    t = matched[1][0] if len(matched) > 1 else 1.0
    nm = sorted((p[q.id], q.query) for q in gold.queries if q.no_match)
    need = nm[math.ceil(0.9 * len(nm)) - 1][0]  # abstaining on 90% of no-tool requests needs t above this
    return {"matched_without_history_below_the_top_no_tool": [(round(v, 4), s) for v, s in matched if v <= none[-1]],
            "no_tool_p_fits": [(round(v, 4), s) for v, s in nm],
            "hindsight_no_match_success_at_most_1_matched": round(sum(v < t for v in none) / len(none), 4),
            "matched_abstaining_at_90pct_no_match": sum(v <= need for v, _ in matched)}


def analyse() -> dict:
    from learn_quality import hesabix_folds

    from tooldisc.discovery.catalog.io import load_catalog
    from tooldisc.discovery.context import default_context
    from tooldisc.discovery.pipeline import Discoverer
    from tooldisc.gold.loader import load_gold

    catalog = load_catalog(SHARED / "hesabix/catalog.json")
    gold = load_gold(SHARED / "hesabix/gold.dev.json")
    folds = hesabix_folds(gold)
    fold = {qid: f for f, ids in enumerate(folds) for qid in ids}
    engine = Discoverer(catalog)
    ctx = default_context(catalog)
    matched = [q for q in gold.queries if q.matched]
    default = {}
    for q in matched:
        r = engine.discover(q.query, ctx, 100, q.history).names
        m = _measures(r, frozenset(q.primary_expected_tools), frozenset(q.acceptable_tools))
        rank = next((i + 1 for i, t in enumerate(r) if t in q.primary_expected_tools), 0)
        default[q.id] = {**m, "rank": rank, "ranking": r[:DEPTH]}
    ranks = Counter("1" if r == 1 else "2-3" if r <= 3 else "4-10" if r <= 10 else ">10"
                    for r in (d["rank"] or 999 for d in default.values()))
    return {
        "matched": len(matched), "no_match": sum(q.no_match for q in gold.queries),
        "default": {m: round(float(np.mean([d[m] for d in default.values()])), 4) for m in ("hit@10", "MRR", "nDCG@10")},
        "default_rank_of_primary": dict(ranks),
        "indistinguishable_exact": _indistinguishable(matched, fold, _key_exact),
        "indistinguishable_content_words": _indistinguishable(matched, fold, _key_content),
        "siblings_labelled_both_ways": _siblings(matched, fold),
        "per_tool_evidence": _per_tool(matched, fold, default),
        "acceptable": _acceptable(matched, default),
        "abstention": _abstention(gold, engine, ctx),
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if not SHARED.is_dir():
        sys.exit(f"needs {SHARED}")
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    out = analyse()
    json.dump(out, sys.stdout, indent=1 if args.json else 2, ensure_ascii=False)
    print()


if __name__ == "__main__":
    main()
