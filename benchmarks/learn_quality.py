"""Quality with and without a learned file, learned only from training splits (issue 13).

Usage: python benchmarks/quality.py --learn [--sets metatool,sealtools,hesabix] [--json]
(or run this file directly with the same flags).

- metatool: learn from ``queries_train.jsonl`` (rows with ``flags`` dropped) + ``queries_no_tool.jsonl``,
  measure on ``queries_sample2k.jsonl`` (never fitted on);
- sealtools: 5-fold cross-validation over ``queries_dev.jsonl``, folds grouped by the first relevant
  tool (GroupKFold), so test tools are mostly unseen in training; learn on four folds, measure the fifth;
- hesabix: 5-fold cross-validation over ``gold.dev.json`` (seeded), no-match queries spread over the
  folds, learned with ``--false-abstention 0.005``.

Every figure is pooled over the held-out queries of every fold. Each learned part is whatever
``learn`` kept (a part is kept only on a significant held-out win inside ``learn``). Both columns
come from the same ``Discoverer`` construction, once with ``learned=`` and once without; the
paired randomization p of each measure is ``tooldisc compare``'s test. Calibration of the offer's
confidence (P(some tool fits)) is reported as expected calibration error over 10 bins.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "benchmarks"
MEASURES = ("hit@10", "recall@5", "MRR", "nDCG@10", "no_match_success", "false_abstention", "forbidden@10")
FOLDS = 5


def _examples_from_rows(path: Path, drop_flagged: bool) -> list:
    from tooldisc.evaluation.learn.data import Example

    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        if drop_flagged and row.get("flags"):
            continue
        relevant = tuple(row["relevant"])
        acceptable = row.get("acceptable") or ()  # a list, or a mapping whose keys name the tools (DESIGN §6)
        out.append(Example(row["query"], relevant, acceptable=tuple(t for t in acceptable if t not in relevant)))
    return out


def _examples_from_gold(queries) -> list:
    from tooldisc.evaluation.learn.data import Example

    return [Example(q.query, () if q.no_match else tuple(q.primary_expected_tools),
                    tuple(c for r, c in q.history if r == "user"), q.intent,
                    () if q.no_match else tuple(t for t in q.acceptable_tools if t not in q.primary_expected_tools))
            for q in queries]


def _run(catalog, gold, learned):
    from tooldisc.discovery.context import default_context
    from tooldisc.discovery.pipeline import Discoverer
    from tooldisc.evaluation.run import run_discovery, score_run

    engine = Discoverer(catalog, learned=learned)
    result = run_discovery(engine, gold, default_context(catalog), 10)
    scores = score_run(result, MEASURES)
    conf = {}
    for q in gold.queries:
        o = engine.discover(q.query, default_context(catalog), 10, q.history)
        conf[q.id] = o.confidence.probability
    return scores, conf


def _pool(parts: list) -> tuple[dict, dict]:
    values: dict = {m: {} for m in MEASURES}
    conf: dict = {}
    for scores, c in parts:
        for m, per in scores.values.items():
            values[str(m)].update(per)
        conf.update(c)
    return values, conf


def _ece(conf: dict, gold_queries) -> tuple[float, list]:
    """Expected calibration error of P(fits) against 'the query has a tool', 10 equal-width bins."""
    p = np.array([conf[q.id] for q in gold_queries if conf[q.id] is not None])
    y = np.array([q.matched for q in gold_queries if conf[q.id] is not None], dtype=float)
    if not len(p):
        return float("nan"), []
    bins = np.minimum((p * 10).astype(int), 9)
    ece, table = 0.0, []
    for b in range(10):
        m = bins == b
        if m.any():
            ece += m.mean() * abs(p[m].mean() - y[m].mean())
            table.append({"bin": f"{b / 10:.1f}-{(b + 1) / 10:.1f}", "n": int(m.sum()),
                          "mean_confidence": round(float(p[m].mean()), 3), "share_matched": round(float(y[m].mean()), 3)})
    return float(ece), table


def _summary(name: str, gold_queries, without, with_, learn_s: list, kept: list) -> dict:
    from tooldisc.evaluation.significance import paired_test

    row: dict = {"set": name, "queries": len(gold_queries), "learn_s": [round(t, 1) for t in learn_s], "kept": kept}
    for m in MEASURES:
        a, b = without[0][m], with_[0][m]
        ids = [q for q in a if q in b]
        if not ids:
            continue
        va, vb = np.array([a[q] for q in ids]), np.array([b[q] for q in ids])
        test = paired_test(va, vb)
        row[m] = {"without": round(float(va.mean()), 4), "with": round(float(vb.mean()), 4),
                  "p": round(test.p_randomization, 4)}
    row["ece"] = {"without": round(_ece(without[1], gold_queries)[0], 4), "with": round(_ece(with_[1], gold_queries)[0], 4)}
    row["reliability_without"] = _ece(without[1], gold_queries)[1]
    row["reliability_with"] = _ece(with_[1], gold_queries)[1]
    return row


def _learn(catalog, examples, **opts):
    from tooldisc.evaluation.learn import LearnOptions, learn

    t0 = time.perf_counter()
    learned = learn(catalog, examples, LearnOptions(**opts))
    return learned, time.perf_counter() - t0


def metatool() -> dict:
    from tooldisc.discovery.catalog.io import load_catalog
    from tooldisc.gold.loader import load_gold

    catalog = load_catalog(SHARED / "metatool/tools.jsonl")
    gold = load_gold(SHARED / "metatool/queries_sample2k.jsonl")
    examples = (_examples_from_rows(SHARED / "metatool/queries_train.jsonl", True)
                + _examples_from_rows(SHARED / "metatool/queries_no_tool.jsonl", False))
    learned, secs = _learn(catalog, examples)
    return _summary("metatool", gold.queries, _pool([_run(catalog, gold, None)]),
                    _pool([_run(catalog, gold, learned)]), [secs], [list(learned.parts)])


def _cv(name: str, catalog, gold, folds, **opts) -> dict:
    without, with_, secs, kept = [], [], [], []
    for test_ids in folds:
        train = [q for q in gold.queries if q.id not in test_ids]
        test = gold.with_queries(tuple(q for q in gold.queries if q.id in test_ids))
        learned, s = _learn(catalog, _examples_from_gold(train), **opts)
        secs.append(s)
        kept.append(list(learned.parts))
        without.append(_run(catalog, test, None))
        with_.append(_run(catalog, test, learned))
    return _summary(name, gold.queries, _pool(without), _pool(with_), secs, kept)


def sealtools() -> dict:
    from sklearn.model_selection import GroupKFold

    from tooldisc.discovery.catalog.io import load_catalog
    from tooldisc.gold.loader import load_gold

    catalog = load_catalog(SHARED / "sealtools/tools.jsonl")
    gold = load_gold(SHARED / "sealtools/queries_dev.jsonl")
    qs = gold.queries
    groups = [q.primary_expected_tools[0] for q in qs]
    folds = [{qs[i].id for i in te} for _, te in GroupKFold(FOLDS).split(qs, groups=groups)]
    return _cv("sealtools", catalog, gold, folds)


def hesabix_folds(gold) -> list[set[str]]:
    """The seeded 5-fold split of hesabix dev, no-match queries spread over the folds (benchmarks/learn_ceiling.py reuses it)."""
    from sklearn.model_selection import StratifiedKFold

    qs = gold.queries
    split = StratifiedKFold(FOLDS, shuffle=True, random_state=0).split(qs, [q.no_match for q in qs])
    return [{qs[i].id for i in te} for _, te in split]


def hesabix() -> dict:
    from tooldisc.discovery.catalog.io import load_catalog
    from tooldisc.gold.loader import load_gold

    catalog = load_catalog(SHARED / "hesabix/catalog.json")
    gold = load_gold(SHARED / "hesabix/gold.dev.json")
    return _cv("hesabix", catalog, gold, hesabix_folds(gold), target_false_abstention=0.005)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", default="metatool,sealtools,hesabix")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--learn", action="store_true", help="(accepted for symmetry with quality.py)")
    args = ap.parse_args(argv)
    if not SHARED.is_dir():
        sys.exit(f"needs {SHARED}")
    runs = {"metatool": metatool, "sealtools": sealtools, "hesabix": hesabix}
    out = [runs[name]() for name in args.sets.split(",")]
    if args.json:
        json.dump(out, sys.stdout, indent=1, ensure_ascii=False)
        return
    for row in out:
        print(f"{row['set']} ({row['queries']} queries; learn {row['learn_s']} s; kept {row['kept']})")
        for m in MEASURES:
            if m in row:
                v = row[m]
                print(f"  {m:<18} without {v['without']:.4f}   with {v['with']:.4f}   p {v['p']:.4f}")
        print(f"  {'ECE':<18} without {row['ece']['without']:.4f}   with {row['ece']['with']:.4f}")


if __name__ == "__main__":
    main()
