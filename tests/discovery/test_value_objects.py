"""Validated value objects (issue 25 item 2): every public constructor of the Python API checks
its fields as the file loaders do. TypeError for a wrong type, ValueError for a bad value, and the
message names the field, so an invalid object cannot be built and no code path can meet one."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import numpy as np
import pytest

import tooldisc
from tooldisc.agent.guard import ToolCall
from tooldisc.discovery.config import (
    AdaptiveSection,
    Bm25Section,
    ClausesSection,
    RankerConfig,
    TextSection,
)
from tooldisc.discovery.learned import Abstention, Expansions, Learned, LinearModel, MutationModel


def _raises(kind: type[Exception], field: str, build: Any) -> None:
    with pytest.raises(kind) as info:
        build()
    assert type(info.value) is kind, type(info.value)  # exactly: not a ValueError that is also a TypeError
    assert field in str(info.value), str(info.value)


# --------------------------------------------------------------------------- Context


@pytest.mark.parametrize(("kwargs", "kind", "field"), [
    ({"mode": "analyser"}, ValueError, "Context.mode"),
    ({"mode": "Analyzer"}, ValueError, "Context.mode"),
    ({"mode": ""}, ValueError, "Context.mode"),
    ({"mode": " analyzer"}, ValueError, "Context.mode"),
    ({"mode": None}, TypeError, "Context.mode"),
    ({"forced": "abc"}, TypeError, "Context.forced"),
    ({"roles": "owner"}, TypeError, "Context.roles"),
    ({"permissions": b"a.read"}, TypeError, "Context.permissions"),
    ({"roles": {"owner": True}}, TypeError, "Context.roles"),
    ({"roles": frozenset({1})}, TypeError, "Context.roles[0]"),
    ({"permissions": [""]}, ValueError, "Context.permissions[0]"),
    ({"tenant": 42}, TypeError, "Context.tenant"),
    ({"tenant": ""}, ValueError, "Context.tenant"),
    ({"tenant": ["t1"]}, TypeError, "Context.tenant"),
    ({"is_default": 1}, TypeError, "Context.is_default"),
])
def test_an_invalid_context_cannot_be_built(kwargs: dict, kind: type[Exception], field: str) -> None:
    _raises(kind, field, lambda: tooldisc.Context(**kwargs))


def test_a_valid_context_takes_any_collection_as_its_frozenset() -> None:
    ctx = tooldisc.Context(tenant="t1", roles=["owner", "owner"], permissions={"a.read"}, forced=("x",),
                           mode="analyzer")
    assert ctx.roles == frozenset({"owner"}) and ctx.permissions == frozenset({"a.read"})
    assert ctx.forced == frozenset({"x"}) and hash(ctx) == hash(dataclasses.replace(ctx))
    with pytest.raises(ValueError, match=r"Context\.mode"):
        dataclasses.replace(ctx, mode="god")  # replace builds through the same check


def test_forced_as_a_string_never_reaches_the_guard() -> None:
    """Measured on main: ``forced="abc"`` matched the forced name ``a`` by substring in the guard."""
    with pytest.raises(TypeError, match="never one str"):
        tooldisc.Context(tenant="t1", forced="delete_invoice")


# --------------------------------------------------------------------------- Tool


@pytest.mark.parametrize(("kwargs", "kind", "field"), [
    ({"name": ""}, ValueError, "Tool.name"),
    ({"name": 5}, TypeError, "Tool.name"),
    ({"name": "a\x1b[2J"}, ValueError, "Tool.name"),
    ({"side_effect": "Delete"}, ValueError, "Tool.side_effect"),
    ({"side_effect": "read"}, ValueError, "Tool.side_effect"),
    ({"side_effect": ["none"]}, TypeError, "Tool.side_effect"),
    ({"enabled": "false"}, TypeError, "Tool.enabled"),
    ({"tenant_required": 0}, TypeError, "Tool.tenant_required"),
    ({"requires_approval": None}, TypeError, "Tool.requires_approval"),
    ({"roles": "owner"}, TypeError, "Tool.roles"),
    ({"roles": {"owner"}}, TypeError, "Tool.roles"),
    ({"roles": ("",)}, ValueError, "Tool.roles[0]"),
    ({"permissions": ("a", None)}, TypeError, "Tool.permissions[1]"),
    ({"roles": ("ro\u202ele",)}, ValueError, "Tool.roles[]"),
    ({"aliases": "pay"}, TypeError, "Tool.aliases"),
    ({"description": None}, TypeError, "Tool.description"),
    ({"parameters": "{}"}, TypeError, "Tool.parameters"),
    ({"capability": 3}, TypeError, "Tool.capability"),
])
def test_an_invalid_tool_cannot_be_built(kwargs: dict, kind: type[Exception], field: str) -> None:
    _raises(kind, field, lambda: tooldisc.Tool(**{"name": "t", "side_effect": "none", **kwargs}))
    _raises(kind, field, lambda: tooldisc.Tool.of_fields(_field_values({"name": "t", "side_effect": "none", **kwargs})))


def _field_values(kwargs: dict) -> list:
    return [kwargs.get(f.name, f.default) for f in dataclasses.fields(tooldisc.Tool)]


def test_a_tool_of_its_fields_is_the_tool_its_init_builds() -> None:
    kwargs = {"name": "فاکتور\u200cها", "roles": ["owner"], "aliases": ("pay",), "side_effect": "write",
              "parameters": {"type": "object"}, "enabled": False, "definition_hash": "h", "quarantine": "q"}
    built, direct = tooldisc.Tool(**kwargs), tooldisc.Tool.of_fields(_field_values(kwargs))
    assert built == direct and built.roles == direct.roles == ("owner",)
    assert [getattr(built, f.name) for f in dataclasses.fields(built)] == \
        [getattr(direct, f.name) for f in dataclasses.fields(direct)]
    with pytest.raises(TypeError, match="every field"):
        tooldisc.Tool.of_fields(_field_values(kwargs)[:-1])


def test_a_tool_takes_a_list_as_its_tuple_and_keeps_persian_joiners() -> None:
    tool = tooldisc.Tool(name="فاکتور\u200cها", roles=["owner"], aliases=["pay"], side_effect="none")
    assert tool.roles == ("owner",) and tool.aliases == ("pay",)
    assert tooldisc.Tool(name="t") == tooldisc.Tool(name="t", side_effect=None)


# --------------------------------------------------------------------------- ToolCall


@pytest.mark.parametrize(("kwargs", "kind", "field"), [
    ({"name": None}, TypeError, "ToolCall.name"),
    ({"name": 5}, TypeError, "ToolCall.name"),
    ({"name": "t", "approval": 123}, TypeError, "ToolCall.approval"),
])
def test_an_invalid_tool_call_cannot_be_built(kwargs: dict, kind: type[Exception], field: str) -> None:
    _raises(kind, field, lambda: ToolCall(**kwargs))


def test_a_model_s_malformed_arguments_are_the_guard_s_refusal_not_an_exception() -> None:
    """Arguments are the model's data: ``[1, 2]`` builds, and the guard refuses it (tests/agent/test_guard.py)."""
    assert ToolCall("t", [1, 2]).arguments == [1, 2]  # type: ignore[arg-type]


# --------------------------------------------------------------------------- the ranker config


@pytest.mark.parametrize(("build", "kind", "field"), [
    (lambda: RankerConfig(k=0), ValueError, "'k'"),
    (lambda: RankerConfig(k="15"), TypeError, "'k'"),
    (lambda: RankerConfig(k=True), TypeError, "'k'"),
    (lambda: RankerConfig(weights={"bm25": 1e308}), ValueError, "'weights.bm25'"),
    (lambda: RankerConfig(weights={"bm25": float("nan")}), ValueError, "'weights.bm25'"),
    (lambda: RankerConfig(weights={"Bm25": 1.0}), ValueError, "weights.Bm25: unknown field; did you mean 'bm25'"),
    (lambda: RankerConfig(weights=[("bm25", 1.0)]), TypeError, "'weights'"),
    (lambda: RankerConfig(bm25={"k1": 1.0}), TypeError, "'bm25'"),
    (lambda: Bm25Section(k1=-1.0), ValueError, "'bm25.k1'"),
    (lambda: TextSection(stem="yes"), TypeError, "'text.stem'"),
    (lambda: AdaptiveSection(policy="Mass"), ValueError, "'adaptive.policy'"),
    (lambda: AdaptiveSection(min_k=9, max_k=3), ValueError, "adaptive.min_k (9) must not exceed adaptive.max_k"),
    (lambda: ClausesSection(weight=1.5), ValueError, "'clauses.weight'"),
])
def test_an_invalid_ranker_config_cannot_be_built(build: Any, kind: type[Exception], field: str) -> None:
    _raises(kind, field, build)


def test_a_config_built_in_python_hashes_as_the_loaded_one() -> None:
    loaded = tooldisc.load_config()
    built = RankerConfig(**{f.name: getattr(loaded, f.name) for f in dataclasses.fields(RankerConfig)})
    assert built.hash == loaded.hash
    assert RankerConfig(k=15.0).k == 15 and type(Bm25Section(k1=1).k1) is float


# --------------------------------------------------------------------------- learned records


def _model(features: tuple[str, ...] = ("bm25", "ngram"), coef: Any = (0.5, 1.0)) -> LinearModel:
    return LinearModel(features, np.array(coef, dtype=np.float64), 0.0)


@pytest.mark.parametrize(("build", "kind", "field"), [
    (lambda: LinearModel("bm25", np.array([1.0])), TypeError, "LinearModel.features"),
    (lambda: LinearModel(("bm25", "bm25"), np.array([1.0, 1.0])), ValueError, "LinearModel.features"),
    (lambda: LinearModel(("bm25",), np.array([1.0, 2.0])), ValueError, "LinearModel.coef"),
    (lambda: LinearModel(("bm25",), np.array([np.inf])), ValueError, "LinearModel.coef[0]"),
    (lambda: LinearModel(("bm25",), ["1"]), TypeError, "LinearModel.coef"),
    (lambda: Learned("h", ranker=_model(coef=(1e308, 1.0))), ValueError, "LinearModel.coef[0]"),
    (lambda: Learned("h", ranker=_model(coef=(2000.0, 1.0))), ValueError, "Learned.ranker.coef[0]"),
    (lambda: Learned("h", ranker=_model(("authorize_all",), (1.0,))), ValueError, "Learned.ranker.features"),
    (lambda: Learned("h", clauses=1.5), ValueError, "Learned.clauses"),
    (lambda: Learned(""), ValueError, "Learned.catalog_hash"),
    (lambda: Learned("h", ranker="x"), TypeError, "Learned.ranker"),
    (lambda: Abstention(_model(("bm25_top",), (1.0,)), 1.5, 0.01), ValueError, "Abstention.threshold"),
    (lambda: Abstention(_model(("bm25",), (1.0,)), 0.5, 0.01), ValueError, "Abstention.model.features"),
    (lambda: MutationModel({"delete": 1.0}, {"READ": 1.0}, 0.0, 0.5), ValueError, "MutationModel.rules"),
    (lambda: MutationModel({"delete": 1e7}, {}, 0.0, 0.5), ValueError, "MutationModel.terms['delete']"),
    (lambda: Expansions(1, 4, {}), ValueError, "Expansions.min_requests"),
    (lambda: Expansions(3, 4, {"t": ("h", (("unpaid", 2),))}), ValueError, "Expansions.tools['t'].phrases"),
    (lambda: Expansions(3, 1, {"t": ("h", (("a", 3), ("b", 3)))}), ValueError, "Expansions.tools['t'].phrases"),
    (lambda: Expansions(3, 4, {"t": ("h", ("unpaid",))}), TypeError, "Expansions.tools['t'].phrases"),
    (lambda: Expansions(3, 4, {}, weight=1e308), ValueError, "Expansions.weight"),
    (lambda: Expansions(3, 4, {}, temperature=0.0), ValueError, "Expansions.temperature"),
])
def test_an_invalid_learned_record_cannot_be_built(build: Any, kind: type[Exception], field: str) -> None:
    with pytest.raises(kind, match=re.escape(field)):
        build()


def test_valid_learned_records_build() -> None:
    exp = Expansions(3, 4, {"t": ("h", (("unpaid invoices", 5),))}, weight=1.0)
    learned = Learned("h", expansions=exp, ranker=_model(), clauses=1.0)
    assert learned.parts == ("expansions", "ranker", "clauses")
