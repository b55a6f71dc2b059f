"""Discovery: catalog → security filter → retrieval → ranking → offer.

The public face (imported lazily, so ``import tooldisc.discovery`` stays instant)::

    from tooldisc.discovery import Discoverer, context_from_mapping, load_catalog
    engine = Discoverer(load_catalog("catalog.yaml"))
    offer = engine.discover("show unpaid invoices", context_from_mapping({"roles": ["accountant"]}))

The wings, one folder per part of the pipeline (README.md "Project layout"):
``catalog/`` reading, validating, caching, diffing, importing and exporting catalogs; ``text/``
how tools and requests become terms; ``indexes/`` the frozen index record and the per-feature
indexes it holds; ``kernels/`` the query loops (numpy, numba JIT, ahead-of-time); ``rank/`` the
features and steps that turn retrieved tools into an offer; ``learned/`` the learned file, read and
applied. The chokepoint (``pipeline``), its typed stage outputs (``stages``), the ranker config, the
request context, the records (``model``) and the security filter (``security``, ``mutation``) sit
at this level.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tooldisc.lazy import lazy_attributes

__all__ = ["Context", "Discoverer", "Offer", "context_from_mapping", "load_catalog", "load_config", "load_learned"]

_LAZY = {
    "Context": "tooldisc.discovery.model",
    "Offer": "tooldisc.discovery.model",
    "Discoverer": "tooldisc.discovery.pipeline",
    "context_from_mapping": "tooldisc.discovery.context",
    "load_catalog": "tooldisc.discovery.catalog.io",
    "load_config": "tooldisc.discovery.config",
    "load_learned": "tooldisc.discovery.learned.read",
}

if TYPE_CHECKING:
    from tooldisc.discovery.catalog.io import load_catalog
    from tooldisc.discovery.config import load_config
    from tooldisc.discovery.context import context_from_mapping
    from tooldisc.discovery.learned.read import load_learned
    from tooldisc.discovery.model import Context, Offer
    from tooldisc.discovery.pipeline import Discoverer


__getattr__ = lazy_attributes(__name__, _LAZY)
