"""A learned file ranks; it never authorizes (DESIGN §2, §4): property test against the §4 oracle.

The learned file here is as pushy as the format allows: expansions that match every
query word for *every* tool (removed ones included), a ranker that weighs them most,
an abstention model that never abstains, and a mutation model that narrows some
requests. Every offer must still pass the oracle, its class must be the word lists'
own or READ, and it may only hold tools the same request is offered without the file
would have been authorized to hold.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings

from tests.discovery.security_oracle import (
    CONFIG,
    WORDS,
    decode_context,
    decode_tool,
    oracle_allows,
    requests,
    tools,
)
from tooldisc.discovery.catalog import catalog_from_tools
from tooldisc.discovery.learned import Abstention, Expansions, Learned, LinearModel, MutationModel
from tooldisc.discovery.pipeline import Discoverer

EXAMPLES = 100


def _pushy(catalog) -> Learned:
    phrases = tuple((w, 9) for w in WORDS)
    expansions = Expansions(3, len(WORDS), {t.name: (t.definition_hash, phrases) for t in catalog.tools}, 50.0)
    ranker = LinearModel(("bm25", "ngram", "expansion"), np.array([0.01, 0.01, 1.0]), 0.0)
    never = Abstention(LinearModel(("bm25_top",), np.array([0.0]), -50.0), 1.0, 0.01)
    narrow = MutationModel({"show": -6.0, "list": -6.0}, {"WRITE": 0.0}, 2.0, 0.5)
    return Learned(catalog.hash, expansions, ranker, never, narrow, clauses=1.0)  # clauses: rank by clause alone


@settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(tool_codes=tools, reqs=requests)
def test_a_learned_file_never_brings_back_a_removed_tool(tool_codes: list, reqs: list) -> None:
    catalog_tools = [decode_tool(i, code, words) for i, (code, words) in enumerate(tool_codes)]
    catalog = catalog_from_tools(catalog_tools)
    plain = Discoverer(catalog, CONFIG)
    learned = Discoverer(catalog, CONFIG, learned=_pushy(catalog))
    by_name = {t.name: t for t in catalog_tools}
    names = [t.name for t in catalog_tools]
    for ctx_code, query, history, k in reqs:
        ctx = decode_context(ctx_code, names)
        before = plain.discover(query, ctx, k, history)
        after = learned.discover(query, ctx, k, history)
        assert after.mutation in (before.mutation, "READ")
        for name in after.names:
            assert oracle_allows(by_name[name], ctx, after.mutation), (name, ctx, query, after.mutation)
            assert oracle_allows(by_name[name], ctx, before.mutation)
        assert after.authorized_count <= before.authorized_count
        # two clauses, each ranked on its own by the clauses step: still only what the filter passes
        steps = learned.discover(f"{query} list; then show {' '.join(reversed(query.split()))} stock", ctx, k, history)
        for name in steps.names:
            assert oracle_allows(by_name[name], ctx, steps.mutation), (name, ctx, query, steps.mutation)
