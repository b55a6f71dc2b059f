"""tooldisc: decide which few tools an LLM agent may see, and prove the choice.

Public API (imported lazily so ``import tooldisc`` stays instant)::

    import tooldisc
    catalog = tooldisc.load_catalog("catalog.yaml")
    engine = tooldisc.Discoverer(catalog)
    offer = engine.discover("show unpaid invoices", tooldisc.Context(roles=frozenset({"user"})))
    offer = tooldisc.discover("show unpaid invoices", catalog=catalog)   # one-off

    run = tooldisc.evaluate("catalog.yaml", "gold.json", k=15)         # eval, in a notebook
    run.metrics["MRR"], run.per_query                                   # totals; polars, per query
    other = tooldisc.evaluate("catalog.yaml", "gold.json", config="configs/bm25.yaml", k=15)
    mine = tooldisc.evaluate("catalog.yaml", "gold.json", k=15, run="embeddings.trec")   # any retriever's run
    tooldisc.compare(run, other, mine, names=["default", "bm25", "mine"]).table   # arms as columns, sign test, Holm
    tooldisc.read_per_query("per_query.jsonl")                          # a --per-query-out file, typed
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tooldisc.lazy import lazy_attributes

__version__ = "0.1.0"

__all__ = [
    "Candidate",
    "Catalog",
    "Comparison",
    "ConfigError",
    "Context",
    "DataError",
    "Discoverer",
    "EvalRun",
    "GoldSet",
    "Offer",
    "RankerConfig",
    "Tool",
    "ToolDiscError",
    "UsageError",
    "__version__",
    "compare",
    "default_context",
    "discover",
    "evaluate",
    "fuse",
    "load_catalog",
    "load_config",
    "load_gold",
    "load_learned",
    "read_per_query",
]

_LAZY = {
    "Candidate": "tooldisc.discovery.model",
    "Context": "tooldisc.discovery.model",
    "Offer": "tooldisc.discovery.model",
    "Tool": "tooldisc.discovery.model",
    "Catalog": "tooldisc.discovery.catalog",
    "load_catalog": "tooldisc.discovery.catalog.io",
    "RankerConfig": "tooldisc.discovery.config",
    "load_config": "tooldisc.discovery.config",
    "load_learned": "tooldisc.discovery.learned.read",
    "Discoverer": "tooldisc.discovery.pipeline",
    "discover": "tooldisc.discovery.pipeline",
    "default_context": "tooldisc.discovery.context",
    "ToolDiscError": "tooldisc.errors",
    "DataError": "tooldisc.errors",
    "ConfigError": "tooldisc.errors",
    "UsageError": "tooldisc.errors",
    "evaluate": "tooldisc.evaluation.api",
    "EvalRun": "tooldisc.evaluation.api",
    "compare": "tooldisc.evaluation.compare",
    "fuse": "tooldisc.evaluation.fuse",
    "read_per_query": "tooldisc.evaluation.per_query",
    "Comparison": "tooldisc.evaluation.compare",
    "load_gold": "tooldisc.gold.loader",
    "GoldSet": "tooldisc.gold.model",
}

if TYPE_CHECKING:
    from tooldisc.discovery.catalog import Catalog
    from tooldisc.discovery.catalog.io import load_catalog
    from tooldisc.discovery.config import RankerConfig, load_config
    from tooldisc.discovery.context import default_context
    from tooldisc.discovery.learned.read import load_learned
    from tooldisc.discovery.model import Candidate, Context, Offer, Tool
    from tooldisc.discovery.pipeline import Discoverer, discover
    from tooldisc.errors import ConfigError, DataError, ToolDiscError, UsageError
    from tooldisc.evaluation.api import EvalRun, evaluate
    from tooldisc.evaluation.compare import Comparison, compare
    from tooldisc.evaluation.fuse import fuse
    from tooldisc.evaluation.per_query import read_per_query
    from tooldisc.gold.loader import load_gold
    from tooldisc.gold.model import GoldSet


__getattr__ = lazy_attributes(__name__, _LAZY)
