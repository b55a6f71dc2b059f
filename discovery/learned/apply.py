"""Applying a learned file to a run: the ranker config it reweights and the index record it extends.

Apart from :mod:`.learned` (the file's records and writing) and :mod:`.learned_read`
(reading and validating it), because applying needs both: a run without a learned file
still takes the shipped default abstention model, which is read like a learned file's.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from tooldisc.discovery.kernels import NUMPY
from tooldisc.discovery.learned import Learned, bind
from tooldisc.discovery.learned.read import default_abstention

if TYPE_CHECKING:
    from tooldisc.discovery.config import RankerConfig
    from tooldisc.discovery.indexes.index import Index


def learned_config(config: RankerConfig, learned: Learned | None) -> RankerConfig:
    """The ranker config with a learned file's weights in place of the config's.

    A learned ranker replaces every relevance weight (the ``core`` tie-break stays);
    expansions without a ranker add the expansion feature at the weight ``learn`` chose.
    The relevance weights are then rescaled to the config's own sum, so scores keep the
    scale adaptive K and the confidence level were set for (a positive factor never
    changes a ranking). A kept clauses part sets ``clauses.weight``. Everything else applies unchanged.
    """
    if learned is not None and learned.clauses is not None:
        config = dataclasses.replace(config, clauses=dataclasses.replace(config.clauses, weight=learned.clauses))
    if learned is None or (learned.ranker is None and learned.expansions is None):
        return config
    from tooldisc.discovery.config import FEATURE_NAMES, RANGES
    from tooldisc.discovery.rank.features import TIE_BREAKERS

    weights = dict(config.weights)
    if learned.ranker is not None:
        weights = {n: 0.0 for n in FEATURE_NAMES if n not in TIE_BREAKERS}
        weights.update({n: float(c) for n, c in zip(learned.ranker.features, learned.ranker.coef, strict=True)})
        weights.update({n: config.weight(n) for n in TIE_BREAKERS})
    else:
        exp = learned.expansions
        weights["expansion"] = exp.weight  # type: ignore[union-attr]
        if exp.affinity is not None:  # type: ignore[union-attr]
            weights["affinity"] = exp.affinity_weight  # type: ignore[union-attr]
    own = sum(config.weight(n) for n in FEATURE_NAMES if n not in TIE_BREAKERS)
    new = sum(w for n, w in weights.items() if n not in TIE_BREAKERS)
    if own > 0 and new > 0:
        weights = {n: (w * own / new if n not in TIE_BREAKERS else w) for n, w in weights.items()}
        # Never past the weight range (RANGES["weight"]): a config summing above it cannot hand one
        # learned feature more than the range allows. A common positive factor: the same ranking.
        cap, top = RANGES["weight"].high, max(w for n, w in weights.items() if n not in TIE_BREAKERS)
        if top > cap:
            weights = {n: (w * cap / top if n not in TIE_BREAKERS else w) for n, w in weights.items()}
    return dataclasses.replace(config, weights={n: round(w, 10) for n, w in weights.items()})


def attach(index: Index, learned: Learned | None) -> Index:
    """The index record with what the learned file (or the shipped default) adds.

    The abstention model is the learned file's when it has one (and then it decides
    abstention), else the shipped default, which gives the offer's confidence always and
    decides abstention only under ``abstain.model: true`` (otherwise the floors do).
    Nothing here touches the security index.
    """
    cfg = index.config
    if learned is not None and learned.abstention is not None:
        abstention = learned.abstention
    else:
        abstention = dataclasses.replace(default_abstention(), decides=cfg.abstain.model)
    if learned is None:
        return dataclasses.replace(index, abstention=abstention)
    from tooldisc.discovery.indexes.expansion import AffinityIndex, ExpansionIndex, expansion_texts
    from tooldisc.memory import gc_paused

    with gc_paused():  # as build_index: bursts of small objects beside every live tool record
        bound = bind(learned, index.catalog)
        expansion = affinity = None
        cells = (index.kernels or NUMPY).rows  # the cell reads take the form of the index's query loops
        if bound.expansions:
            expansion = ExpansionIndex.build(index.catalog.tools, expansion_texts(bound.expansions), index.lexical,
                                             cfg.bm25.k1, cfg.bm25.b, cfg.text.stem, cells)
        if bound.affinity:
            affinity = AffinityIndex.build(index.catalog.tools, bound.affinity, learned.expansions.temperature,  # type: ignore[union-attr]
                                           cells)
        digest = learned.digest
    return dataclasses.replace(index, expansion=expansion, affinity=affinity, abstention=abstention,
                               mutation_model=learned.mutation, learned_digest=digest, learned_notes=bound.notes)
