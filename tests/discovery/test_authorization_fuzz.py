"""Proof by fuzzing that no re-encoding of a policy key or value widens access (issue 25 item 7).

Strategies, mutations and the oracle: :mod:`tests.discovery.authorization_fuzz`. Counts come from
:mod:`tests.fuzzing` (≥ 10,000 at the level of the readers and the guard under CI=true; ``make
fuzz`` runs more). The end-to-end batch runs the real commands, a few processes for hundreds of
examples. Planted bugs show the property bites.
"""

from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.conftest import run_cli
from tests.discovery import authorization_fuzz as fz
from tests.fuzzing import examples

_SETTINGS = {"deadline": None, "database": None, "derandomize": True,
             "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large]}


CASE_BYTES = 96  # enough for three tools, a context and the mutation's numbers


def decode_case(data: bytes, focus: str | None = None) -> tuple[list[dict[str, Any]], dict[str, Any], int, list[int], str]:
    """A catalog, a context, the numbers that choose one mutation, and the form it is read in.

    ``focus="mode"`` (a planted bug's test only): an analyzer context holding every role and
    permission, its ``mode`` value the mutation's target, so a mode misread is met at once.
    """
    r = fz.Bytes(data)
    tools, ctx = fz.decode_documents(r)
    choice = r.below(2**16)
    picks = [r.below(2**16) for _ in range(4)]
    # the Python objects are cheapest; JSON and YAML text go through the hardened file readers
    form = ("object", "object", "object", "json", "json", "json", "json", "yaml")[r.below(8)]
    if focus == "mode":
        ctx = {"tenant": "t1", "roles": list(fz.ROLES), "permissions": list(fz.PERMS), "mode": "analyzer"}
        choice = 2 * len(tools) * (4 * r.below(2**10) + 2)  # the context, a value mutation
    return tools, ctx, choice, picks, form


def cases(focus: str | None = None) -> st.SearchStrategy[Any]:
    return st.binary(min_size=CASE_BYTES, max_size=CASE_BYTES).map(lambda b: decode_case(b, focus))


def _picker(picks: list[int]) -> Any:
    state = {"at": 0}

    def pick(n: int) -> int:
        value = picks[state["at"] % len(picks)] + state["at"]
        state["at"] += 1
        return value % n

    return pick


def check_case(case: tuple[list[dict[str, Any]], dict[str, Any], int, list[int], str]) -> str:
    """Refused, or no wider than the oracle on the unmutated documents; returns the outcome."""
    tools, ctx, choice, picks, form = case
    mutated_tools, mutated_ctx, mutation = fz.mutate(tools, ctx, choice, _picker(picks))
    try:
        catalog, context = fz.load(mutated_tools, mutated_ctx, form)
    except fz.REFUSED:
        return "refused"
    wider = fz.widenings(catalog, context, tools, ctx)
    assert not wider, (mutation, form, wider, tools, ctx)
    return "loaded"


def _property(count: int, phases: tuple[Phase, ...] = tuple(Phase), focus: str | None = None) -> Any:
    @settings(max_examples=count, phases=phases, **_SETTINGS)
    @given(cases(focus))
    def prop(case: Any) -> None:
        check_case(case)

    return prop


@pytest.mark.fuzz
def test_no_reencoding_of_a_policy_key_or_value_widens_access() -> None:
    """≥ 10,000 examples under CI=true: readers (JSON, YAML, Python objects), filter and guard."""
    _property(examples(ci=10_000, fuzz=100_000))()


@pytest.mark.fuzz
@settings(max_examples=examples(ci=500, fuzz=5_000), **_SETTINGS)
@given(st.binary(min_size=CASE_BYTES, max_size=CASE_BYTES), st.sampled_from(("object", "json", "yaml")))
def test_the_oracle_agrees_with_tooldisc_on_valid_documents(data: bytes, form: str) -> None:
    """Without a mutation the filter and guard decide exactly what the oracle does, so "no wider"
    is measured against the right thing (and a loader that refused valid input would show here)."""
    from tooldisc.discovery.indexes.index import AuthorizedSets
    from tooldisc.discovery.security import SecurityIndex

    tools, ctx = fz.decode_documents(fz.Bytes(data))
    catalog, context = fz.load(tools, ctx, form)
    assert fz.widenings(catalog, context, tools, ctx) == []
    authorized = AuthorizedSets(SecurityIndex(catalog.tools, catalog.name_index))
    for mutation in fz.CLASSES:
        passed = {catalog.tools[i].name for i in authorized(context, mutation).tolist()}
        assert passed == {t["name"] for t in tools if fz.oracle_allows(t, ctx, mutation)}, (mutation, tools, ctx)


def test_the_mutations_cover_every_category() -> None:
    """Case, spelling, singular/plural, type, nesting, extra key and look-alikes all occur."""
    rng = random.Random(7)
    kinds: set[str] = set()
    for _ in range(3000):
        tools = [{"name": "t0_a", "side_effect": "delete", "roles": ["owner"], "permissions": ["a.read"],
                  "enabled": True, "tenant_required": True, "requires_approval": True, "always_confirm": False}]
        ctx = {"tenant": "t1", "roles": ["owner"], "permissions": ["a.read"], "mode": "supervised",
               "forced": ["t0_a"]}
        kinds.add(fz.mutate(tools, ctx, rng.randrange(2**16), lambda n: rng.randrange(n))[2].kind)
    for family in ("key_case_", "key_spelling_", "key_plural", "key_lookalike", "key_fullwidth", "key_zero_width",
                   "key_extension", "key_nesting", "type_", "nesting", "value_case_", "value_lookalike",
                   "item_case_", "item_lookalike", "extra_key"):
        assert any(k.startswith(family) for k in kinds), family


# --------------------------------------------------------------------------- planted bugs


_PLANTED = 2_000  # a planted bug must be met well before this (the property stops at the first failure)


def _fails(focus: str | None = None) -> None:
    with pytest.raises(AssertionError, match=r"the filter passes|the guard runs"):
        _property(_PLANTED, phases=(Phase.generate,), focus=focus)()


def test_a_loader_that_ignores_unknown_keys_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The old rule ("unknown field, ignored") planted back: a misspelled ``Roles`` drops the roles."""
    import tooldisc.discovery.catalog as catalog_module
    import tooldisc.discovery.context as context_module

    monkeypatch.setattr(catalog_module, "key_problems", lambda *a, **k: iter(()))
    monkeypatch.setattr(context_module, "check_keys", lambda *a, **k: None)
    _fails()


def test_a_guard_that_skips_the_role_check_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    import tooldisc.agent.guard as guard_module
    from tooldisc.discovery.security import check_tool

    monkeypatch.setattr(guard_module, "check_tool",
                        lambda tool, ctx, mutation: check_tool(dataclasses.replace(tool, roles=()), ctx, mutation))
    _fails()


def test_a_mode_read_case_insensitively_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """``mode: Analyzer`` accepted (as the Python API once did) gets the full matrix, not read-only."""
    import tooldisc.discovery.context as context_module
    import tooldisc.discovery.model as model_module

    modes = tuple(m for base in fz.MODES for m in (base, base.upper(), base[:1].upper() + base[1:]))
    monkeypatch.setattr(model_module, "MODES", modes)
    monkeypatch.setattr(context_module, "MODES", modes)
    _fails(focus="mode")


# --------------------------------------------------------------------------- end to end, batched

# Query texts whose mutation class the word lists decide; the oracle is told the class the
# classifier gives, as the offer property of security_oracle reads offer.mutation.
QUERIES = ("show invoice report", "list customer payment", "delete invoice", "remove customer",
           "create invoice", "add payment", "export report to excel", "run stock job", "invoice", "گزارش فاکتور")


def _random_tool(rng: random.Random, i: int) -> dict[str, Any]:
    tool: dict[str, Any] = {"name": f"e{i}_{rng.choice(fz.WORDS)}",
                            "description": " ".join(rng.sample(["invoice", "customer", "report", "stock", "payment",
                                                                "excel", "job", "فاکتور", "گزارش"], 4))}
    side_effect = rng.choice((*fz.SIDE_EFFECTS, None))
    if side_effect is not None:
        tool["side_effect"] = side_effect
    for key, values in (("roles", fz.ROLES), ("permissions", fz.PERMS)):
        items = rng.sample(values, rng.randrange(3))
        if items:
            tool[key] = items
    for flag in fz.TOOL_FLAGS:
        value = rng.choice((None, True, False))
        if value is not None:
            tool[flag] = value
    return tool


@pytest.mark.fuzz
def test_end_to_end_batches_through_the_real_commands(tmp_path: Path) -> None:
    """≤ 500 mutated tools in one catalog: one ``catalog validate`` says which are refused, and the rest
    load in ``eval`` runs (one process per context, every query) whose offers must pass the oracle;
    mutated context files are refused (exit 2) or judged the same way."""
    from tooldisc.discovery.mutation import load_classifier

    rng = random.Random(25)
    n = examples(ci=400, fuzz=2_000, local=60)
    originals = [_random_tool(rng, i) for i in range(n)]
    mutated = [fz.mutate([t], {}, 2 * rng.randrange(2**15) + 1, lambda k: rng.randrange(k))[0][0] for t in originals]
    catalog = tmp_path / "mutated.json"
    catalog.write_text(json.dumps({"catalog_version": "1", "tools": mutated}, ensure_ascii=False), encoding="utf-8")
    validated = run_cli("catalog", "validate", str(catalog), "--json")
    assert validated.returncode in (0, 1), validated.stderr
    refused = {int(i["path"].split("]")[0].split("[")[1]) for i in json.loads(validated.stdout)["issues"]
               if i["level"] in ("error", "quarantine") and i["path"].startswith("tools[")}
    assert 0 < len(refused) < n  # both outcomes occur
    kept = [i for i in range(n) if i not in refused]
    loaded = tmp_path / "loaded.yaml"
    loaded.write_text(yaml.safe_dump({"catalog_version": "1", "tools": [mutated[i] for i in kept]},
                                     allow_unicode=True), encoding="utf-8")
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps({"queries": [{"id": f"q{j}", "query": q, "intent": "read", "no_match": True}
                                            for j, q in enumerate(QUERIES)]}), encoding="utf-8")
    config = tmp_path / "open.yaml"  # no abstention floor: every matching authorized tool is offered
    config.write_text("abstain: {model: false, min_bm25: 0.0, min_ngram: 0.0}\n", encoding="utf-8")
    by_name = {originals[i]["name"]: originals[i] for i in kept}
    classes = {q: load_classifier().classify(q) for q in QUERIES}

    contexts = [{"tenant": "t1", "roles": ["owner", "admin"], "permissions": list(fz.PERMS)},
                {"roles": ["viewer"], "permissions": ["a.read"], "mode": "supervised"},
                {"tenant": "t1", "roles": list(fz.ROLES), "permissions": list(fz.PERMS), "mode": "analyzer"}]
    names = [originals[i]["name"] for i in kept]
    contexts.append({"tenant": "t1", "roles": ["clerk"], "permissions": ["a.read", "a.write"],
                     "forced": rng.sample(names, min(3, len(names)))})
    runs = [(ctx, ctx) for ctx in contexts]
    for j in range(4):  # mutated context files, judged against the unmutated context
        base = contexts[j % len(contexts)]
        runs.append((fz.mutate([], base, 1 + j * 7, lambda k: rng.randrange(k))[1], base))
    offered_total = 0
    for j, (written, ctx) in enumerate(runs):
        path = tmp_path / f"ctx{j}.yaml"
        path.write_text(yaml.safe_dump(written, allow_unicode=True), encoding="utf-8")
        rows = tmp_path / f"rows{j}.jsonl"
        proc = run_cli("eval", "--catalog", str(loaded), "--gold", str(gold), "--config", str(config),
                       "--context-file", str(path), "--k", "1000", "--per-query-out", str(rows), "--json",
                       "--no-progress")
        if written != ctx and proc.returncode == 2:
            assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
            continue  # refused at load
        assert proc.returncode == 0, proc.stderr
        for line in rows.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            mutation = classes[row["query"]]
            for name in row["offered"]:
                assert fz.oracle_allows(by_name[name], ctx, mutation), (name, mutation, row["query"], written)
                offered_total += 1
    assert offered_total > 0
