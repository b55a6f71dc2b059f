"""tooldisc: decide which few tools an LLM agent may see, and prove the choice.

Public API (imported lazily so ``import tooldisc`` stays instant)::

    import tooldisc
    catalog = tooldisc.load_catalog("catalog.yaml")
    engine = tooldisc.Discoverer(catalog)
    offer = engine.discover("show unpaid invoices", tooldisc.Context(roles=frozenset({"user"})))
    offer = tooldisc.discover("show unpaid invoices", catalog=catalog)   # one-off
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = [
    "Candidate",
    "Catalog",
    "ConfigError",
    "Context",
    "DataError",
    "Discoverer",
    "Offer",
    "RankerConfig",
    "Tool",
    "ToolDiscError",
    "__version__",
    "default_context",
    "discover",
    "load_catalog",
    "load_config",
]

_LAZY = {
    "Candidate": "tooldisc.discovery.model",
    "Context": "tooldisc.discovery.model",
    "Offer": "tooldisc.discovery.model",
    "Tool": "tooldisc.discovery.model",
    "Catalog": "tooldisc.discovery.catalog",
    "load_catalog": "tooldisc.discovery.catalog_io",
    "RankerConfig": "tooldisc.discovery.config",
    "load_config": "tooldisc.discovery.config",
    "Discoverer": "tooldisc.discovery.pipeline",
    "discover": "tooldisc.discovery.pipeline",
    "default_context": "tooldisc.discovery.context",
    "ToolDiscError": "tooldisc.errors",
    "DataError": "tooldisc.errors",
    "ConfigError": "tooldisc.errors",
}

if TYPE_CHECKING:
    from tooldisc.discovery.catalog import Catalog
    from tooldisc.discovery.catalog_io import load_catalog
    from tooldisc.discovery.config import RankerConfig, load_config
    from tooldisc.discovery.context import default_context
    from tooldisc.discovery.model import Candidate, Context, Offer, Tool
    from tooldisc.discovery.pipeline import Discoverer, discover
    from tooldisc.errors import ConfigError, DataError, ToolDiscError


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'tooldisc' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
