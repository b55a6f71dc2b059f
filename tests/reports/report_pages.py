"""One HTML page of every report kind, built in process from real documents, with Persian
user text wherever a report shows user text (queries, slice labels, tool names).

The browser tests (``tests/reports/test_browser.py``) and ``make screenshots`` load these.
Compare pages: two arms (two configs) and four (three configs and another
retriever's TREC run, sliced by category). Canary verdicts come from ``canary synth`` scenarios with known verdicts: HOLD (too few
requests yet), PROMOTE and ROLLBACK (task success shown worse), a shadow verdict and an
interleaving verdict (HOLD: the preference still inconclusive).
"""

from __future__ import annotations

import json
from pathlib import Path

from tooldisc.reports import render

TOOLS = [
    {"name": "list_invoices", "description": "فهرست فاکتورهای فروش", "side_effect": "none",
     "keywords": ["فاکتور", "فاکتورها", "invoice", "invoices"]},
    {"name": "get_invoice", "description": "نمایش یک فاکتور با شماره", "side_effect": "none",
     "keywords": ["فاکتور", "شماره"]},
    {"name": "create_invoice", "description": "ساخت فاکتور فروش", "side_effect": "write",
     "keywords": ["ساخت", "فاکتور"]},
    {"name": "delete_invoice", "description": "حذف فاکتور فروش", "side_effect": "delete",
     "keywords": ["حذف", "فاکتور"]},
    {"name": "list_customers", "description": "فهرست مشتریان", "side_effect": "none",
     "keywords": ["مشتری", "مشتریان", "customers"]},
    {"name": "export_report", "description": "خروجی اکسل گزارش فروش", "side_effect": "export",
     "keywords": ["گزارش", "اکسل"]},
]
QUERIES = [
    {"id": "q1", "query": "فاکتورهای فروش را نشان بده", "primary_expected_tools": ["list_invoices"],
     "acceptable_tools": ["get_invoice"], "intent": "read", "category": "فاکتور"},
    {"id": "q2", "query": "فاکتور شماره ۱۲ را حذف کن", "primary_expected_tools": ["delete_invoice"],
     "forbidden_tools": ["create_invoice"], "intent": "delete", "category": "فاکتور"},
    {"id": "q3", "query": "فهرست مشتریان", "primary_expected_tools": ["list_customers"], "intent": "read",
     "category": "مشتری"},
    {"id": "q4", "query": "هوای مریخ چطور است؟", "primary_expected_tools": ["list_customers"],
     "intent": "read", "category": "مشتری"},
    {"id": "q5", "query": "گزارش فروش را اکسل بگیر", "primary_expected_tools": ["export_report"],
     "intent": "export", "category": "گزارش"},
    {"id": "q6", "query": "show invoices of customers", "primary_expected_tools": ["list_invoices"],
     "forbidden_tools": ["list_customers"], "intent": "read", "category": "فاکتور"},
    {"id": "q7", "query": "یک لطیفه بگو", "no_match": True, "intent": "none", "category": "هیچ"},
]
# Another retriever's run for the four-arm compare page: it offers a tool the catalog lacks
# (a long name, which must wrap or scroll inside its table) and a write tool to a read request.
OTHER_RUN = {
    "q1": ["list_invoices", "embedding_retriever_suggestion_that_the_catalog_does_not_have"],
    "q2": ["delete_invoice", "get_invoice"],
    "q3": ["list_customers"],
    "q4": ["create_invoice", "list_customers"],
    "q5": ["list_invoices", "export_report"],
    "q6": ["list_customers", "list_invoices"],
}
# A tool added with a Persian name and no roles: the diff reports it as loosening policy.
ADDED = {"name": "حذف_همه_فاکتورها", "description": "حذف همه فاکتورها", "side_effect": "delete"}
EXPERIMENT = "indexed-retrieval-v1"
# (page name, scenario, events, percent, seed) with a known verdict each
CANARY = (("verdict-hold", "healthy", 30_000, 10, 4), ("verdict-promote", "healthy", 40_000, 50, 5),
          ("verdict-rollback", "task_regression", 6_000, 25, 5))
# an interleaving verdict still waiting for its preference (HOLD, the wait in interleaved requests)
INTERLEAVING = ("verdict-interleaving", "no_preference", 4_000, 50, 4)


def _files(tmp: Path) -> tuple[Path, Path, Path]:
    cat, gold, new = tmp / "catalog.json", tmp / "gold.json", tmp / "catalog-new.json"
    cat.write_text(json.dumps({"catalog_version": "fa-1", "tools": TOOLS}, ensure_ascii=False), encoding="utf-8")
    gold.write_text(json.dumps({"catalog_version": "fa-1", "queries": QUERIES}, ensure_ascii=False),
                    encoding="utf-8")
    changed = [dict(t, roles=["admin"]) if t["name"] == "export_report" else t for t in TOOLS]
    new.write_text(json.dumps({"catalog_version": "fa-2", "tools": [*changed, ADDED]}, ensure_ascii=False),
                   encoding="utf-8")
    return cat, gold, new


def _run_file(tmp: Path) -> Path:
    path = tmp / "embeddings.trec"
    path.write_text("".join(f"{q} Q0 {t} {r + 1} {10 - r} emb\n" for q, tools in OTHER_RUN.items()
                            for r, t in enumerate(tools)), encoding="utf-8")
    return path


def documents(tmp: Path) -> dict[str, tuple[str, dict]]:
    """(report kind, document) per page name."""
    import tooldisc
    from tooldisc.canary.events import EVENT_SCHEMA
    from tooldisc.canary.shadow import SHADOW_SCHEMA
    from tooldisc.canary.synthetic.events import synthesize
    from tooldisc.canary.synthetic.shadow import synthesize_shadow
    from tooldisc.canary.verdict import run_verdict
    from tooldisc.discovery.catalog.diff import diff_catalogs
    from tooldisc.discovery.catalog.io import load_catalog
    from tooldisc.discovery.pipeline import Discoverer
    from tooldisc.evaluation.compare import compare_document
    from tooldisc.evaluation.gate import check, gate_document, parse_thresholds
    from tooldisc.evaluation.run import run_discovery
    from tooldisc.evaluation.sweep import sweep_document
    from tooldisc.evaluation.tune import WeightTuner
    from tooldisc.evaluation.tune.report import tune_document
    from tooldisc.gold.loader import load_gold

    root = Path(__file__).resolve().parents[2]
    cat_path, gold_path, new_path = _files(tmp)
    run = tooldisc.evaluate(cat_path, gold_path, k=3)
    bm25 = tooldisc.evaluate(cat_path, gold_path, config=root / "configs" / "bm25.yaml", k=3)
    mix = tooldisc.evaluate(cat_path, gold_path, config=root / "configs" / "mix.yaml", k=3)
    other = tooldisc.evaluate(cat_path, gold_path, k=3, run=_run_file(tmp))
    doc = run.document(by=("category",))
    cat, gold = load_catalog(cat_path), load_gold(gold_path)
    engine = Discoverer(cat)
    out: dict[str, tuple[str, dict]] = {
        "eval": ("eval", doc),
        "sweep": ("sweep", sweep_document(run_discovery(engine, gold, engine.default_context, 5), (1, 3, 5))),
        "compare": ("compare", compare_document(bm25, run, permutations=200, resamples=2_000)),
        "compare-4": ("compare", compare_document(run, bm25, mix, other, names=["default", "bm25", "mix", "embeddings"],
                                                  permutations=200, resamples=2_000, by=("category",))),
        "gate": ("gate", gate_document(check(parse_thresholds(["hit@3=0.9", "MRR=0.5"], ["forbidden@3=0"]),
                                             doc["metrics"]))),
        "catalog-diff": ("catalog-diff", {"old": cat_path.name, "new": new_path.name,
                                          **diff_catalogs(cat, load_catalog(new_path)).to_dict()}),
    }
    tuner = WeightTuner(n_iter=1, cv=2, k=3, random_state=0, objective="nDCG@3")
    tuner.fit([(cat, gold)])
    out["tune"] = ("tune", tune_document(tuner, [(cat, gold)]))
    for name, scenario, events, percent, seed in CANARY:
        path = tmp / f"{name}.parquet"
        synthesize(path, events, scenario, percent=percent, seed=seed, experiment=EXPERIMENT)
        out[name] = ("verdict", run_verdict(EVENT_SCHEMA, EXPERIMENT, events=str(path))[1])
    from tooldisc.canary.synthetic.interleaving import synthesize_interleaving

    name, scenario, events, percent, seed = INTERLEAVING
    path = tmp / f"{name}.parquet"
    synthesize_interleaving(path, events, scenario, percent=percent, seed=seed)
    out[name] = ("verdict", run_verdict(EVENT_SCHEMA, "ranking-v2", events=str(path), profile_name="interleaving")[1])
    out.update(command_documents(tmp, cat_path, gold_path, tmp / "verdict-hold.parquet"))
    shadow = tmp / "shadow.jsonl"
    synthesize_shadow(shadow, 400, "healthy", seed=1)
    out["verdict-shadow"] = ("verdict", run_verdict(SHADOW_SCHEMA, "capability-planner-v1", events=str(shadow),
                                                    profile_name="shadow")[1])
    return out


def command_documents(tmp: Path, cat_path: Path, gold_path: Path, events: Path) -> dict[str, tuple[str, dict]]:
    """The command reports (discover, plan, learn, bench, catalog, gold, canary simulate and ingest): each
    command's ``--json`` document on the Persian set, run in process as a user runs it."""
    from tests.conftest import invoke_cli

    plan = tmp / "plan.json"
    plan.write_text(json.dumps({"decision": "tools", "actions": [
        {"id": "a1", "tool": "list_invoices", "arguments": {}},
        {"id": "a2", "tool": "حذف_فاکتور_ناموجود", "arguments": {}}]}, ensure_ascii=False), encoding="utf-8")
    calls = {
        "discover": ("discover", "فاکتورهای فروش را نشان بده", "--catalog", str(cat_path)),
        "plan": ("plan", "validate", str(plan), "--catalog", str(cat_path)),
        "learn": ("learn", "--from", str(gold_path), "--catalog", str(cat_path), "--out", str(tmp / "learned.json"),
                  "--folds", "2"),
        "bench": ("bench", "--tools", "200", "--queries", "10", "--repeats", "1", "--no-baselines"),
        "catalog-validate": ("catalog", "validate", str(cat_path)),
        "catalog-stats": ("catalog", "stats", str(cat_path)),
        "gold-validate": ("gold", "validate", str(gold_path), "--catalog", str(cat_path)),
        "gold-stats": ("gold", "stats", str(gold_path)),
        "gold-split": ("gold", "split", str(gold_path), "--out-dir", str(tmp / "split")),
        "canary-simulate": ("canary", "simulate", "--salt", "s", "--percent", "10", "--ids", "2000"),
        "canary-ingest": ("canary", "ingest", str(events), "--db", str(tmp / "ingest.duckdb")),
    }
    out: dict[str, tuple[str, dict]] = {}
    for kind, args in calls.items():
        done = invoke_cli(*args, "--json", env={"TOOLDISC_CACHE_DIR": str(tmp / "cache")})
        assert done.returncode in (0, 1), (kind, done.stderr)
        out[kind] = (kind, json.loads(done.stdout))
    return out


def all_pages(tmp: Path) -> dict[str, str]:
    """Every report kind as a standalone HTML page, by page name."""
    return {name: render(doc, kind, "html") for name, (kind, doc) in documents(tmp).items()}
