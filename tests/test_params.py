"""Bad-value tests generated from the parameter rulebook (tooldisc.params), issue 26 item 4.

Nothing here names a parameter: every record's constraints are read from its own table
(the ranker config's schema, the gates rules, ``parameter_constraints``, the count limits),
values just outside each bound, of the wrong type or not an option are generated from each
constraint, and the record's real entry point (a file loader, a constructor, ``fit``) must
refuse them with the one message form; values on the bounds must be accepted. A parameter
added to any table is covered with no edit here.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzzing import examples
from tooldisc.errors import ConfigError, ToolDiscError, UsageError
from tooldisc.params import Either, Flag, Interval, Items, NumberMap, Options, Text, message

# --- values generated from a constraint ---------------------------------------------


def _inside(rule: Interval, bound: float, upward: bool) -> Any:
    """The value nearest ``bound`` that the range holds (the bound itself when closed)."""
    closed = rule.closed in (("both", "left") if upward else ("both", "right"))
    if rule.kind is int:
        return int(bound) if closed else int(bound) + (1 if upward else -1)
    if rule.grid is not None:
        return bound if closed else bound + (1 if upward else -1) / rule.grid
    return float(bound) if closed else math.nextafter(float(bound), math.inf if upward else -math.inf)


def _outside(rule: Interval, bound: float, upward: bool) -> Any:
    """The value nearest ``bound`` that the range does not hold (the bound itself when open)."""
    closed = rule.closed in (("both", "left") if upward else ("both", "right"))
    if rule.kind is int:
        return int(bound) - (1 if upward else -1)
    if not closed:
        return float(bound)
    return math.nextafter(float(bound), -math.inf if upward else math.inf)


def refused(rule: Any) -> Iterator[tuple[Any, type[Exception]]]:
    """(value, the builtin class the rule maps it to) for values the rule must refuse."""
    if isinstance(rule, Interval):
        yield from (("x", TypeError), (None, TypeError), (True, TypeError))
        if rule.kind is int:
            yield 1.5, TypeError
            if rule.strict and rule.low is not None:
                yield float(_inside(rule, rule.low, True)), TypeError
        else:
            yield from ((math.nan, ValueError), (math.inf, ValueError), (-math.inf, ValueError))
        if rule.low is not None:
            yield _outside(rule, rule.low, True), ValueError
        if rule.high is not None:
            yield _outside(rule, rule.high, False), ValueError
        if rule.grid is not None and rule.low is not None:
            yield _inside(rule, rule.low, True) + 0.5 / rule.grid, ValueError
    elif isinstance(rule, Options):
        yield from ((1, TypeError), (None, TypeError), (rule.options[0] + "x", ValueError),
                    (rule.options[0].upper() + "!", ValueError))
    elif isinstance(rule, Flag):
        yield from ((1, TypeError), ("yes", TypeError), (None, TypeError))
    elif isinstance(rule, Text):
        yield from ((5, TypeError), (None, TypeError), (b"x" * max(rule.low, 1), TypeError))
        if rule.low > 0:
            yield "x" * (rule.low - 1), ValueError
        if rule.high is not None:
            yield "x" * (rule.high + 1), ValueError
    elif isinstance(rule, Items):
        yield from (([], ValueError), (5, TypeError))
        for value, kind in refused(rule.each):
            yield [value], kind
    elif isinstance(rule, Either):
        for sub in rule.rules:
            for value, _ in refused(sub):
                if all(r.problem(value, "x") is not None for r in rule.rules):
                    yield value, rule.problem(value, "x")[0]
    else:  # a parsed rule (a ladder, segment columns, scenario names): a value of no list shape
        yield from ((12345, TypeError), ("x", TypeError))


def accepted(rule: Any) -> Iterator[Any]:
    """Values on (or next to, for an open bound) each bound of the rule, and every option."""
    if isinstance(rule, Interval):
        if rule.low is not None:
            yield _inside(rule, rule.low, True)
            if rule.kind is int and not rule.strict:
                yield float(_inside(rule, rule.low, True))  # YAML's 3.0 where an int is declared
        if rule.high is not None:
            yield _inside(rule, rule.high, False)
    elif isinstance(rule, Options):
        yield from rule.options
    elif isinstance(rule, Flag):
        yield from (True, False)
    elif isinstance(rule, Text):
        yield "x" * rule.low
        if rule.high is not None:
            yield "é" * rule.high  # characters, not bytes
    elif isinstance(rule, Items):
        yield from ([v] for v in accepted(rule.each))
    elif isinstance(rule, Either):
        for sub in rule.rules:
            yield from accepted(sub)


# --- the records: each one's table and its real entry point ----------------------------


@dataclass(frozen=True)
class Record:
    """An options record: its rules (path → constraint) and how a value reaches it."""

    name: str
    rules: Callable[[], dict[str, Any]]
    apply: Callable[[str, Any], Any]
    error: type[ToolDiscError] | None  # None: the builtin class the rule names (TypeError/ValueError)
    file: str | None = None  # the file a refusal names (a file loader)


def _config_rules() -> dict[str, Any]:
    from tooldisc.discovery.config import schema

    out: dict[str, Any] = {}
    for path, rule in schema():
        if isinstance(rule, NumberMap):
            out.update({f"{path}.{name}": rule.values for name in rule.names})
        else:
            out[path] = rule
    return out


def _partner(path: str, value: Any) -> dict[str, Any]:
    """The other key of an ordered pair (``ngram.lo`` ≤ ``ngram.hi``), set so that the pair holds."""
    from tooldisc.discovery.config import RankerConfig

    head, _, rest = path.partition(".")
    section = getattr(RankerConfig(), head, None)
    rules = _config_rules()
    for lo, hi in getattr(type(section), "ORDERED", ()):
        if rest == lo:
            return {hi: rules[f"{head}.{hi}"].high}
        if rest == hi:
            return {lo: rules[f"{head}.{lo}"].low}
    return {}


def _config_file(path: str, value: Any) -> Any:
    from tooldisc.discovery.config import config_from_mapping

    head, _, rest = path.partition(".")
    raw = {head: {rest: value, **_partner(path, value)}} if rest else {head: value}
    return config_from_mapping(raw, file="c.yaml")


def _config_api(path: str, value: Any) -> Any:
    from tooldisc.discovery.config import RankerConfig

    head, _, rest = path.partition(".")
    if not rest:
        return RankerConfig(**{head: value})
    section = getattr(RankerConfig(), head)
    if isinstance(section, dict):
        return RankerConfig(**{head: {rest: value}})
    return dataclasses.replace(section, **{rest: value, **_partner(path, value)})


def _gates_rules() -> dict[str, Any]:
    from tooldisc.canary.config import (
        DEFAULT_MARGINS,
        GATE_RULES,
        INTERLEAVING_RULES,
        SHADOW_RULES,
        margin_rule,
    )

    return {**GATE_RULES, **{f"shadow.{k}": r for k, r in SHADOW_RULES.items()},
            **{f"interleaving.{k}": r for k, r in INTERLEAVING_RULES.items()},
            **{f"margins.{m}/{kind}": margin_rule(m, kind) for m in DEFAULT_MARGINS for kind in ("absolute", "relative")}}


def _gates_file(path: str, value: Any) -> Any:
    from tooldisc.canary.config import parse_gates

    head, _, rest = path.partition(".")
    if head == "margins":
        metric, kind = rest.split("/")
        return parse_gates({"margins": {metric: {kind: value}}}, "g.yaml")
    return parse_gates({head: {rest: value}} if rest else {head: value}, "g.yaml")


def _rules_of(cls_path: str) -> Callable[[], dict[str, Any]]:
    def rules() -> dict[str, Any]:
        module, _, name = cls_path.rpartition(".")
        return dict(getattr(__import__(module, fromlist=[name]), name).parameter_constraints)
    return rules


def _learn(name: str, value: Any) -> Any:
    from tooldisc.evaluation.learn import LearnOptions

    return LearnOptions(**{name: value})


def _bench(name: str, value: Any) -> Any:
    from tooldisc.evaluation.bench import BenchOptions

    return BenchOptions(**{name: value})


def _tuner(name: str, value: Any) -> Any:
    from tooldisc.evaluation.tune import WeightTuner

    tuner = WeightTuner(**{name: value})  # __init__ only stores (the estimator contract) ...
    tuner._validate_params()  # ... and fit checks first, through this
    return tuner


def _counts() -> dict[str, Any]:
    from tooldisc.limits import COUNTS

    return dict(COUNTS)


def _count(name: str, value: Any) -> Any:
    from tooldisc.limits import check_count

    return check_count(name, value)


def _k_request(name: str, value: Any) -> Any:
    from tooldisc.evaluation.api import check_k

    return check_k(value)


def _k_rules() -> dict[str, Any]:
    from tooldisc.limits import K_REQUEST

    return {"k": K_REQUEST}


def _split_rules() -> dict[str, Any]:
    from tooldisc.gold.stats import SPLIT_CONSTRAINTS

    return dict(SPLIT_CONSTRAINTS)


def _split(name: str, value: Any) -> Any:
    from tooldisc.gold.model import GoldQuery, GoldSet
    from tooldisc.gold.stats import split

    gold = GoldSet(queries=(GoldQuery("q1", "list invoices", ("list_invoices",), intent="read"),))
    return split(gold, **{"test_fraction": 0.3, "seed": 0, name: value})


def _backend_rules() -> dict[str, Any]:
    from tooldisc.discovery.kernels import BACKEND

    return {"backend": BACKEND}


def _backend(name: str, value: Any) -> Any:
    from tooldisc.discovery.kernels import check_backend

    return check_backend(value)


def _request_id_rules() -> dict[str, Any]:
    from tooldisc.discovery.rank.interleave import REQUEST_ID

    return {"request_id": REQUEST_ID}


def _request_id(name: str, value: Any) -> Any:
    from tooldisc.discovery.rank.interleave import check_request_id

    return check_request_id(value)


def _assignment_rules() -> dict[str, Any]:
    from tooldisc.canary.assignment import ID

    return {name: ID for name in ("salt", "tenant_id", "user_id", "request_id")}


def _assignment(name: str, value: Any) -> Any:
    from tooldisc.canary.assignment import bucket, request_bucket

    args = {"salt": "s", "tenant_id": "t", "user_id": "u", "request_id": "r", name: value}
    if name == "request_id":
        return request_bucket(args["salt"], args["request_id"])
    return bucket(args["salt"], args["tenant_id"], args["user_id"])


def _canary_option_rules() -> dict[str, Any]:
    from tooldisc.canary.engines import engine_rule
    from tooldisc.canary.profiles import profile_rule

    return {"--engine": engine_rule(), "--profile": profile_rule()}


def _canary_option(name: str, value: Any) -> Any:
    from tooldisc.canary.engines import choose_engine
    from tooldisc.canary.profiles import profile

    return choose_engine(value, {}) if name == "--engine" else profile(value)


RECORDS = (
    Record("ranker config file", _config_rules, _config_file, ConfigError, "c.yaml"),
    Record("ranker config object", _config_rules, _config_api, None),
    Record("gates file", _gates_rules, _gates_file, ConfigError, "g.yaml"),
    Record("LearnOptions", _rules_of("tooldisc.evaluation.learn.LearnOptions"), _learn, UsageError),
    Record("BenchOptions", _rules_of("tooldisc.evaluation.bench.BenchOptions"), _bench, UsageError),
    Record("WeightTuner", _rules_of("tooldisc.evaluation.tune.WeightTuner"), _tuner, UsageError),
    Record("count limits", _counts, _count, UsageError),
    Record("k of a request", _k_rules, _k_request, UsageError),
    Record("gold split", _split_rules, _split, UsageError),
    Record("kernels backend", _backend_rules, _backend, UsageError),
    Record("interleaving request id", _request_id_rules, _request_id, UsageError),
    Record("canary assignment ids", _assignment_rules, _assignment, UsageError),
    Record("canary options", _canary_option_rules, _canary_option, UsageError),
)


def _where(path: str) -> str:
    return path.split("/")[0]  # a margin's rule is per metric and kind; its key is the metric


def _cases(kind: str) -> list[Any]:
    out = []
    for record in RECORDS:
        for path, rule in record.rules().items():
            if kind == "refused":
                out += [pytest.param(record, path, rule, value, builtin, id=f"{record.name}:{path}={value!r}")
                        for value, builtin in refused(rule)]
            else:
                out += [pytest.param(record, path, rule, value, id=f"{record.name}:{path}={value!r}")
                        for value in accepted(rule)]
    return out


@pytest.mark.parametrize(("record", "path", "rule", "value", "builtin"), _cases("refused"))
def test_a_value_outside_its_rule_is_refused_in_the_one_message_form(record: Record, path: str, rule: Any,
                                                                     value: Any, builtin: type[Exception]) -> None:
    expected = message(_where(path), rule.describe(), value)
    with pytest.raises(record.error or builtin) as info:
        record.apply(path, value)
    if record.error is None:
        assert type(info.value) is builtin and str(info.value) == expected
    else:
        assert info.value.message == expected
        assert info.value.file == record.file
        if record.file is not None:
            assert info.value.where == _where(path)


@pytest.mark.parametrize(("record", "path", "rule", "value"), _cases("accepted"))
def test_a_value_on_its_bounds_is_accepted(record: Record, path: str, rule: Any, value: Any) -> None:
    record.apply(path, value)


def test_every_record_has_rules_and_every_rule_has_generated_cases() -> None:
    for record in RECORDS:
        rules = record.rules()
        assert rules, record.name
        for path, rule in rules.items():
            assert list(refused(rule)), (record.name, path)
            assert rule.describe() and rule.describe()[0].islower(), (record.name, path)


_PAIRS = [(record, path, rule) for record in RECORDS for path, rule in record.rules().items()
          if not isinstance(rule, Items) and type(rule).__name__ != "Parsed"]
_VALUES = st.one_of(st.integers(-10**12, 10**12), st.floats(allow_nan=True, allow_infinity=True),
                    st.floats(0, 1), st.booleans(), st.none(), st.sampled_from(["", "auto", "ratio", "x"]))


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pair=st.sampled_from(_PAIRS), value=_VALUES)
def test_a_record_decides_exactly_as_its_rule(pair: tuple[Record, str, Any], value: Any) -> None:
    """Any value: the record refuses it exactly when its rule does (nothing checked twice or by hand)."""
    record, path, rule = pair
    found = rule.problem(value, _where(path))
    try:
        record.apply(path, value)
    except (TypeError, ValueError) as exc:
        assert found is not None, (record.name, path, value, exc)
        assert (exc.message if isinstance(exc, ToolDiscError) else str(exc)) == found[1]
    else:
        assert found is None, (record.name, path, value)


# --- the rulebook itself ---------------------------------------------------------------


def test_the_message_form_is_scikit_learns() -> None:
    rule = Interval(int, 1, 1000)
    assert rule.problem(0, "k") == (ValueError, "The 'k' parameter must be an int in the range [1, 1000]. Got 0 instead.")
    assert rule.problem("3", "--k") == (TypeError, "--k must be an int in the range [1, 1000]. Got '3' instead.")
    assert Interval(float, 0, 1, closed="neither", grid=10_000).describe() == "a number in the range (0, 1) in steps of 0.0001"
    assert Interval(int, 1, None, strict=True).describe() == "an int in the range [1, inf)"
    assert Options(("a", "b")).describe() == "one of a, b" and Options(("auto",)).describe() == "'auto'"
    assert Interval(int, None, None, strict=True).describe() == "an int"  # no range to name
    assert Text(1, 256).problem("", "request_id") == (
        ValueError, "The 'request_id' parameter must be a non-empty str of at most 256 characters. Got '' instead.")
    assert Text().describe() == "a non-empty str" and Text(0, 9).describe() == "a str of at most 9 characters"


def test_a_huge_int_is_refused_not_a_crash() -> None:
    for rule in (Interval(int, 0, 10), Interval(float, 0, 10), Interval(int, 0, 10, strict=True)):
        assert rule.problem(10**400, "n")[0] is ValueError
    assert rule.problem(10**5000, "n")[1].endswith("Got an int of 16610 bits instead.")  # past repr's digit limit
    assert len(rule.problem("x" * 10**6, "n")[1]) < 400  # a long value is cut: the error stays one line


def test_the_cli_k_option_shares_the_one_k_rule() -> None:
    from tooldisc.cli.options import parse_k
    from tooldisc.discovery.config import RankerConfig, schema
    from tooldisc.limits import COUNTS, K_OPTION

    k_rule = dict(schema())["k"]
    assert (k_rule.low, k_rule.high) == (COUNTS["k"].low, COUNTS["k"].high) == (1, 1000)
    assert parse_k("1000") == 1000 and parse_k("auto") == "auto" and RankerConfig(k=1000).k == 1000
    for bad in ("0", "1001", "x", "5.0"):
        with pytest.raises(UsageError) as info:
            parse_k(bad)
        assert info.value.message == message("--k", K_OPTION.describe(), bad)
