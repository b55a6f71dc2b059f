"""What one evaluation run reads: catalog, gold set, ranker config, context — loaded once, here.

Every surface that evaluates (``tooldisc eval``, ``sweep``, ``compare``, ``gate``,
``tune`` and :func:`tooldisc.evaluate`) loads its inputs through :func:`load_run_inputs`
or the small loaders beside it, so the default files, the gold-against-catalog check
and the notes a user must see are decided in one place. Loading never prints: the
notes travel in :attr:`RunInputs.notes` and the caller decides where they go.

A learned file (``tooldisc learn``) is one more input, :attr:`RunInputs.learned`; the
warnings about its stale parts for this catalog travel in the notes like the others.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tooldisc.errors import DataError, UsageError

if TYPE_CHECKING:
    from tooldisc.discovery.catalog import Catalog
    from tooldisc.discovery.config import RankerConfig
    from tooldisc.discovery.learned import Learned
    from tooldisc.discovery.model import Context
    from tooldisc.gold.model import GoldSet

PathLike = str | os.PathLike[str]
# The keyword arguments of discovery.context.build_context a context request may carry.
CONTEXT_KEYS = ("context_file", "tenant", "roles", "permissions", "mode", "forced")


def default_gold_path() -> Path:
    """The shipped gold set: the one a command uses when no ``--gold`` is given."""
    from tooldisc.discovery.catalog.io import shipped_datasets

    return shipped_datasets()[0][1]


@dataclass(frozen=True)
class RunInputs:
    """Everything a run needs, loaded and checked against each other.

    ``notes`` are lines for a person (``note: …``, ``warning: …``): catalog notes,
    quarantined tools, gold-set warnings. Whether the context is the catalog default
    is ``context.is_default``; callers say so where their output does not.
    ``learned`` is a verified learned file, or ``None``.
    """

    catalog: Catalog
    gold: GoldSet
    config: RankerConfig
    context: Context
    learned: Learned | None = None
    notes: tuple[str, ...] = ()


def load_learned_input(learned: PathLike | Learned | None) -> Learned | None:
    """A learned file from a path (verified), as given, or ``None``."""
    from tooldisc.discovery.learned import Learned
    from tooldisc.discovery.learned.read import load_learned

    if learned is None or isinstance(learned, Learned):
        return learned
    if not isinstance(learned, str | os.PathLike):
        raise UsageError("The 'learned' parameter must be a path, a Learned (tooldisc.load_learned) or None. "
                         f"Got {type(learned).__name__} instead.")
    return load_learned(learned)


def learned_notes(learned: Learned | None, catalog: Catalog) -> tuple[str, ...]:
    """What a learned file ignores for this catalog (stale parts), as warning lines."""
    if learned is None:
        return ()
    from tooldisc.discovery.learned import bind

    return bind(learned, catalog).notes


def load_catalog_input(catalog: PathLike | Catalog | None, cache: Any = None) -> tuple[Catalog, tuple[str, ...]]:
    """The catalog (a path, a loaded one, or ``None`` for the shipped one) and its notes; ``cache``: the
    on-disk cache its validated records may come from (:func:`~tooldisc.discovery.catalog.io.load_catalog`)."""
    from tooldisc.discovery.catalog import Catalog
    from tooldisc.discovery.catalog.io import default_catalog_path, load_catalog

    cat = catalog if isinstance(catalog, Catalog) else load_catalog(catalog if catalog else default_catalog_path(),
                                                                    cache=cache)
    notes = [f"note: {text}" for text in cat.notes]
    notes += [f"warning: {cat.source}: tool {t.name!r} is quarantined and will never be offered: {t.quarantine}"
              for t in cat.tools if t.quarantine]
    return cat, tuple(notes)


def load_gold_input(gold: PathLike | GoldSet | None, catalog: Catalog, *, qrels: PathLike | None = None,
                    topics: PathLike | None = None) -> tuple[GoldSet, tuple[str, ...]]:
    """The gold set, checked against ``catalog``: a tool it lacks is an error, a version mismatch a warning.

    ``gold`` is a path, a loaded set, or ``None`` for the shipped one; ``qrels`` with
    ``topics`` (TREC files) stand in for it. Returns the set and its warning lines.
    """
    from tooldisc.gold.model import GoldSet
    from tooldisc.gold.validate import validate_gold

    if qrels is not None or topics is not None:
        if gold is not None:
            raise UsageError("give the gold set either as --gold or as --qrels with --topics, not both")
        if qrels is None or topics is None:
            raise UsageError("--qrels and --topics go together: the qrels judge, the topics hold the query text")
        from tooldisc.gold.trec import load_trec_gold

        gold_set = load_trec_gold(qrels, topics)
    elif isinstance(gold, GoldSet):
        gold_set = gold
    else:
        from tooldisc.gold.loader import load_gold

        gold_set = load_gold(gold if gold else default_gold_path())
    issues = validate_gold(gold_set, catalog)
    errors = [i for i in issues if i.level == "error"]
    if errors:
        more = f" (and {len(errors) - 1} more; run 'tooldisc gold validate')" if len(errors) > 1 else ""
        raise DataError(errors[0].message + more, file=gold_set.source, where=errors[0].where)
    return gold_set, tuple(f"warning: {i.render(gold_set.source)}" for i in issues)


def load_config_input(config: PathLike | RankerConfig | None) -> RankerConfig:
    """A ranker config from a path, as given, or the shipped default."""
    from tooldisc.discovery.config import RankerConfig, load_config

    return config if isinstance(config, RankerConfig) else load_config(config)


def context_input(catalog: Catalog, context: Context | Mapping[str, Any] | None) -> Context:
    """The request context: given, built from flags (``CONTEXT_KEYS``), or the catalog default."""
    from tooldisc.discovery.context import build_context, default_context
    from tooldisc.discovery.model import Context

    if context is None:
        return default_context(catalog)
    if isinstance(context, Context):
        return context
    unknown = sorted(set(context) - set(CONTEXT_KEYS))
    if unknown:
        raise UsageError(f"context options must be among {', '.join(CONTEXT_KEYS)}; got {unknown[0]!r}")
    return build_context(catalog, **{k: v for k, v in context.items() if v is not None})


def load_run_inputs(catalog: PathLike | Catalog | None = None, gold: PathLike | GoldSet | None = None,
                    config: PathLike | RankerConfig | None = None, *,
                    context: Context | Mapping[str, Any] | None = None, qrels: PathLike | None = None,
                    topics: PathLike | None = None, learned: PathLike | Learned | None = None,
                    cache: Any = None) -> RunInputs:
    """Load and cross-check every input of a run; ``None`` means the shipped default; ``cache``: the on-disk
    cache the catalog's validated records may come from (the command line's; the API passes none).

    Order matters only for errors: a bad catalog is reported before a gold set that
    names its tools, and neither is read twice.
    """
    cat, cat_notes = load_catalog_input(catalog, cache)
    gold_set, gold_notes = load_gold_input(gold, cat, qrels=qrels, topics=topics)
    cfg = load_config_input(config)
    ctx = context_input(cat, context)
    file = load_learned_input(learned)
    return RunInputs(cat, gold_set, cfg, ctx, file, (*cat_notes, *gold_notes, *learned_notes(file, cat)))
