"""Measure the semantic tier on its own: cross-lingual meaning, retrieval, cost; write one JSON.

Usage: python benchmarks/embedding_eval.py [--out /tmp/embedding_eval.json]
       [--shared ../shared] [--metatool-limit 2000] [--skip-metatool]

What it reports (embedding-only ranking over the whole catalog, no authorization,
no lexical features — the lexical BM25 on the same texts is the baseline beside it):

* Persian ↔ English meaning on 40 translation pairs written for this script (none
  taken from the shared benchmarks): mean cosine of matched vs mismatched pairs,
  top-1 accuracy among all 40, and among 30 candidates (the pair plus 29 seeded
  random distractors, 10 draws per pair).
* MetaTool (``tools.jsonl``, English): recall@5 over ``queries_sample2k.jsonl``.
* hesabix (``catalog.json`` + ``gold.dev.json``) and the default gold set: hit@10
  (a primary tool in the top 10), recall@5 and MRR@10 over matched queries.
* Cost: model load, index build per catalog, query-encoding latency p50/p95
  (uncached), scoring latency, installed size, peak RSS.

The shared benchmarks are read in place and never copied; nothing is tuned here.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

# Written for this benchmark: business-tool phrases an accounting/ERP user might type,
# plus a few out-of-domain ones, each with an English translation.
PAIRS: tuple[tuple[str, str], ...] = (
    ("فاکتور فروش", "sales invoice"), ("موجودی انبار", "warehouse stock"),
    ("حذف مشتری", "delete customer"), ("ثبت سفارش خرید", "create purchase order"),
    ("گزارش سود و زیان", "profit and loss report"), ("پرداخت حقوق کارکنان", "pay employee salaries"),
    ("ارسال ایمیل به مشتری", "send an email to the customer"), ("بازگرداندن کالا", "return goods"),
    ("تغییر رمز عبور", "change password"), ("فهرست تامین کنندگان", "list of suppliers"),
    ("صورتحساب بانکی", "bank statement"), ("چک برگشتی", "bounced cheque"),
    ("تراز آزمایشی", "trial balance"), ("افزودن کالای جدید", "add a new product"),
    ("قیمت خرید کالا", "product purchase price"), ("تخفیف ویژه", "special discount"),
    ("مالیات بر ارزش افزوده", "value added tax"), ("دفتر کل", "general ledger"),
    ("ورود به حساب کاربری", "log in to the user account"), ("آب و هوای تهران", "weather in Tehran"),
    ("رزرو بلیط هواپیما", "book a plane ticket"), ("ترجمه متن", "translate text"),
    ("جستجوی فایل", "search for a file"), ("برنامه ریزی جلسه", "schedule a meeting"),
    ("نرخ ارز", "currency exchange rate"), ("پشتیبان گیری از پایگاه داده", "back up the database"),
    ("چاپ رسید", "print the receipt"), ("انتقال وجه", "money transfer"),
    ("اقساط وام", "loan installments"), ("شماره تلفن همراه", "mobile phone number"),
    ("آدرس تحویل", "delivery address"), ("بستن سال مالی", "close the fiscal year"),
    ("هزینه حمل و نقل", "shipping cost"), ("ساعت ورود و خروج کارمندان", "employee check-in and check-out times"),
    ("لغو اشتراک", "cancel subscription"), ("خبرهای امروز", "today's news"),
    ("دستور پخت غذا", "food recipe"), ("تبدیل واحد", "unit conversion"),
    ("مرخصی استعلاجی", "sick leave"), ("استهلاک دارایی ثابت", "fixed asset depreciation"),
)


def translation_pairs(encoder) -> dict:
    from tooldisc.discovery.indexes.embedding import l2_normalize, prepare

    fa = np.stack([encoder.query_vector(p) for p, _ in PAIRS])
    en = l2_normalize(encoder.model.encode_documents([prepare(e) for _, e in PAIRS]))
    s = fa @ en.T
    n = len(PAIRS)
    off = ~np.eye(n, dtype=bool)
    rng = np.random.default_rng(0)
    hits = trials = 0
    for i in range(n):
        for _ in range(10):
            cands = np.concatenate([[i], rng.choice(np.flatnonzero(np.arange(n) != i), 29, replace=False)])
            hits += int(cands[np.argmax(s[i, cands])] == i)
            trials += 1
    return {"pairs": n, "mean_cos_matched": round(float(np.diag(s).mean()), 4),
            "mean_cos_mismatched": round(float(s[off].mean()), 4),
            "top1_fa_to_en_of_40": round(float((s.argmax(1) == np.arange(n)).mean()), 4),
            "top1_en_to_fa_of_40": round(float((s.argmax(0) == np.arange(n)).mean()), 4),
            "top1_of_30_candidates": round(hits / trials, 4)}


def measures(names: Sequence[str], scores: np.ndarray, relevant: Sequence[set[str]]) -> dict:
    """hit@10, recall@5 and MRR@10 of full-catalog rankings; ties broken by name."""
    name_rank = np.argsort(np.argsort(np.asarray(names)))
    hit10, r5, mrr = [], [], []
    for row, rel in zip(scores, relevant, strict=True):
        order = np.lexsort((name_rank, -row))[:10]
        top = [names[j] for j in order]
        hit10.append(float(bool(rel & set(top))))
        r5.append(len(rel & set(top[:5])) / len(rel))
        first = next((i for i, t in enumerate(top) if t in rel), None)
        mrr.append(0.0 if first is None else 1.0 / (first + 1))
    return {"queries": len(relevant), "hit@10": round(float(np.mean(hit10)), 4),
            "R@5": round(float(np.mean(r5)), 4), "MRR@10": round(float(np.mean(mrr)), 4)}


def evaluate_set(name: str, tools, queries: Sequence[str], relevant: Sequence[set[str]], encoder,
                 latencies: list[float]) -> dict:
    from tooldisc.discovery.config import load_config
    from tooldisc.discovery.indexes.embedding import build_embedding_index
    from tooldisc.discovery.indexes.lexical import LexicalIndex

    t0 = time.perf_counter()
    index = build_embedding_index(tools, encoder)
    build = time.perf_counter() - t0
    everything = np.arange(len(tools))
    emb = np.empty((len(queries), len(tools)), dtype=np.float32)
    score_times = []
    for i, q in enumerate(queries):
        t = time.perf_counter()
        encoder.query_vector(q)
        latencies.append(time.perf_counter() - t)
        t = time.perf_counter()
        emb[i] = index.similarity(q, everything)
        score_times.append(time.perf_counter() - t)
    cfg = load_config()
    lex = LexicalIndex.build(tools, cfg.fields, cfg.bm25.k1, cfg.bm25.b)
    bm = np.stack([lex.scores(q) for q in queries]).astype(np.float64)
    names = [t.name for t in tools]
    bm_norm = bm / np.maximum(bm.max(axis=1, keepdims=True), 1e-12)
    lo, hi = emb.min(axis=1, keepdims=True), emb.max(axis=1, keepdims=True)
    emb_norm = (emb - lo) / np.maximum(hi - lo, 1e-12)
    out = {"tools": len(tools), "index_build_s": round(build, 2),
           "score_ms_p50": round(float(np.median(score_times)) * 1000, 4),
           "embedding_only": measures(names, emb, relevant),
           "bm25_only": measures(names, bm, relevant)}
    # Illustration of fusion only (fixed weights, not tuned): max-scaled BM25 plus
    # w × per-query min-max-scaled cosine.
    for w in (0.5, 1.0):
        out[f"bm25+{w}*embedding"] = measures(names, bm_norm + w * emb_norm, relevant)
    print(f"{name}: {json.dumps(out)}", file=sys.stderr, flush=True)
    return out


def load_sets(shared: Path, metatool_limit: int, skip_metatool: bool) -> dict[str, tuple]:
    from tooldisc.discovery.catalog.io import default_catalog_path, load_catalog
    from tooldisc.gold.loader import load_gold

    def gold(catalog_path, gold_path):
        cat = load_catalog(catalog_path)
        qs = [q for q in load_gold(gold_path).queries if q.matched]
        return cat.tools, [q.query for q in qs], [set(q.primary_expected_tools) for q in qs]

    sets: dict[str, tuple] = {}
    hes = shared / "benchmarks" / "hesabix"
    if hes.exists():
        sets["hesabix_dev"] = gold(hes / "catalog.json", hes / "gold.dev.json")
    sets["default"] = gold(default_catalog_path(), ROOT / "gold" / "data" / "gold.json")
    meta = shared / "benchmarks" / "metatool"
    if meta.exists() and not skip_metatool:
        cat = load_catalog(meta / "tools.jsonl")
        rows = [json.loads(line) for line in (meta / "queries_sample2k.jsonl").read_text("utf-8").splitlines()
                if line.strip()][:metatool_limit]
        sets["metatool"] = (cat.tools, [r["query"] for r in rows], [set(r["relevant"]) for r in rows])
    return sets


def installed_size_mb(dist: str) -> float:
    files = metadata.distribution(dist).files or []
    return round(sum(f.locate().stat().st_size for f in files if f.locate().exists()) / 2**20, 1)


def timed(fn: Callable[[], object]) -> tuple[float, object]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="/tmp/embedding_eval.json")
    ap.add_argument("--shared", default=str(ROOT.parent / "shared"))
    ap.add_argument("--metatool-limit", type=int, default=2000)
    ap.add_argument("--skip-metatool", action="store_true")
    args = ap.parse_args(argv)

    from tooldisc.discovery.indexes.embedding import (
        MODEL_NAME,
        PACKAGE,
        REQUIREMENT,
        E5Model,
        SemanticEncoder,
    )

    load_s, model = timed(E5Model)
    encoder = SemanticEncoder(model)
    report: dict = {
        "benchmark": "embedding_eval", "model": MODEL_NAME, "requirement": REQUIREMENT,
        "installed_mb": installed_size_mb(PACKAGE), "model_load_ms": round(load_s * 1000, 1),
        "commit": subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                                 text=True).stdout.strip(),
        "python": platform.python_version(), "cores": os.cpu_count(),
        "omp": {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "OMP_WAIT_POLICY")},
        "load_average_at_start": os.getloadavg()[0],
        "translation_pairs": translation_pairs(encoder), "sets": {},
    }
    latencies: list[float] = []
    for name, (tools, queries, relevant) in load_sets(Path(args.shared), args.metatool_limit,
                                                      args.skip_metatool).items():
        report["sets"][name] = evaluate_set(name, tools, queries, relevant, encoder, latencies)
    lat = np.asarray(latencies) * 1000
    report["query_encode_ms"] = {"n": len(lat), "p50": round(float(np.median(lat)), 2),
                                 "p95": round(float(np.percentile(lat, 95)), 2)}
    report["peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    Path(args.out).write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", "utf-8")
    print(json.dumps(report, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
