"""A TREC run from another retriever (bm25s), to compare with tooldisc as an external arm.

    python benchmarks/bm25s_run.py TOOLS.jsonl QUERIES.jsonl OUT.trec [--depth 50]

Ranks every tool of a ``tools.jsonl`` (name and description, bm25s's own tokenizer,
English stop words, Snowball stems) for every query of a ``queries.jsonl`` and writes
the top ``depth`` as a TREC run with bm25s's scores (names percent-encoded, as every
tooldisc TREC file). Then ``tooldisc compare default --run bm25s=OUT.trec --catalog
TOOLS.jsonl --gold QUERIES.jsonl`` puts it beside tooldisc: this is the "any
retriever's run" of issue 27, not a tooldisc ranking. Needs the ``dev`` extra (bm25s).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tools")
    ap.add_argument("queries")
    ap.add_argument("out")
    ap.add_argument("--depth", type=int, default=50)
    args = ap.parse_args()

    import bm25s
    import Stemmer

    from tooldisc.gold.trec import run_text

    tools = [json.loads(line) for line in Path(args.tools).read_text("utf-8").splitlines() if line.strip()]
    queries = [json.loads(line) for line in Path(args.queries).read_text("utf-8").splitlines() if line.strip()]
    stemmer = Stemmer.Stemmer("english")
    corpus = [f"{t['name']} {t.get('description') or ''}" for t in tools]
    index = bm25s.BM25()
    index.index(bm25s.tokenize(corpus, stopwords="en", stemmer=stemmer, show_progress=False), show_progress=False)
    tokens = bm25s.tokenize([q["query"] for q in queries], stopwords="en", stemmer=stemmer, show_progress=False)
    depth = min(args.depth, len(tools))
    found, scores = index.retrieve(tokens, k=depth, show_progress=False, n_threads=0)
    run, run_scores = {}, {}
    for q, ids, ss in zip(queries, found, scores, strict=True):
        kept = [(tools[int(i)]["name"], float(s)) for i, s in zip(ids, ss, strict=True) if s > 0]
        run[str(q["id"])] = tuple(n for n, _ in kept)
        run_scores[str(q["id"])] = tuple(s for _, s in kept)
    Path(args.out).write_text(run_text(run, "bm25s", scores=run_scores), encoding="utf-8")
    print(json.dumps({"tools": len(tools), "queries": len(queries), "depth": depth, "out": args.out,
                      "bm25s": bm25s.__version__}))


if __name__ == "__main__":
    main()
