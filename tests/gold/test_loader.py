"""Loading gold sets: every format, format detection, and one-line errors with their place."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tooldisc.errors import DataError
from tooldisc.gold import GoldQuery, gold_schema, load_gold
from tooldisc.gold.loader import EXTERNAL_NOTE
from tooldisc.metrics import Judgment

Q1 = {
    "id": "inv-1", "query": "فاکتور فروش بزن", "primary_expected_tools": ["create_invoice"],
    "acceptable_tools": ["search_persons"], "forbidden_tools": ["delete_invoice"],
    "required_capability": "financial.invoice", "intent": "write", "category": "invoice",
    "difficulty": "easy", "hard_case": "", "no_match": False,
    "history": [{"role": "user", "content": "مشتری علی را پیدا کن"}], "require_all_primary": False,
    "source": "test",
}
Q2 = {"id": "chat-1", "query": "hello there", "intent": "none", "no_match": True, "primary_expected_tools": []}
DOC = {"dataset_version": "v1", "tool_catalog_version": "cat-1", "split": "dev", "queries": [Q1, Q2]}


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def check_loaded(gold) -> None:
    assert [q.id for q in gold] == ["inv-1", "chat-1"]
    q = gold.queries[0]
    assert q == GoldQuery(
        id="inv-1", query="فاکتور فروش بزن", primary_expected_tools=("create_invoice",),
        acceptable_tools=("search_persons",), forbidden_tools=("delete_invoice",),
        required_capability="financial.invoice", intent="write", category="invoice", difficulty="easy",
        hard_case=None, no_match=False, history=(("user", "مشتری علی را پیدا کن"),),
        require_all_primary=False, source="test",
    )
    assert gold.queries[1].no_match and gold.queries[1].intent == "none"
    assert q.judgment() == Judgment("inv-1", frozenset({"create_invoice"}), frozenset({"search_persons"}),
                                    frozenset({"delete_invoice"}), "write", False)


def test_json_document(tmp_path: Path) -> None:
    gold = load_gold(write(tmp_path, "gold.json", json.dumps(DOC, ensure_ascii=False)))
    check_loaded(gold)
    assert gold.dataset_version == "v1" and gold.catalog_version == "cat-1"
    assert gold.source.endswith("gold.json") and gold.notes == ()
    assert list(gold.judgments()) == ["inv-1", "chat-1"]


def test_json_list_and_jsonl(tmp_path: Path) -> None:
    check_loaded(load_gold(write(tmp_path, "a.json", json.dumps([Q1, Q2]))))
    text = "\n".join(json.dumps(q, ensure_ascii=False) for q in (Q1, Q2)) + "\n\n"
    check_loaded(load_gold(write(tmp_path, "a.jsonl", text)))


def test_yaml(tmp_path: Path) -> None:
    import yaml

    check_loaded(load_gold(write(tmp_path, "g.yaml", yaml.safe_dump(DOC, allow_unicode=True))))
    # the format comes from the content, not the name
    check_loaded(load_gold(write(tmp_path, "g.txt", yaml.safe_dump(DOC, allow_unicode=True))))


def test_yaml_is_read_with_a_safe_loader(tmp_path: Path) -> None:
    p = write(tmp_path, "evil.yaml", "queries: !!python/object/apply:os.system ['true']\n")
    with pytest.raises(DataError, match="neither JSON nor valid YAML"):
        load_gold(p)


def test_external_benchmark_format(tmp_path: Path) -> None:
    rows = [
        {"id": "a", "query": "area of a circle", "relevant": ["geometry.area_circle"],
         "acceptable": {"area_circle.calculate": "geometry.area_circle"}, "category": "simple", "n_gold_calls": 1},
        {"id": 7, "query": "two tools", "relevant": ["x", "y"], "acceptable": ["z", "x"], "flags": []},
        {"id": "c", "query": "chit chat", "relevant": []},
    ]
    gold = load_gold(write(tmp_path, "queries.jsonl", "\n".join(json.dumps(r) for r in rows)))
    a, b, c = gold.queries
    assert a.primary_expected_tools == ("geometry.area_circle",)
    assert a.acceptable_tools == ("area_circle.calculate",)
    assert a.intent == "read" and a.category == "simple" and not a.no_match
    assert b.id == "7" and b.primary_expected_tools == ("x", "y") and b.acceptable_tools == ("z",)
    assert c.no_match and c.primary_expected_tools == ()
    assert gold.notes == (EXTERNAL_NOTE,)


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        ({"queries": [Q1, {**Q2, "intent": "wrte"}]},
         "gold.json: queries[1]: intent must be one of read, write, delete, export, execute, none; got 'wrte'"),
        ({"queries": [{**Q1, "primary_expected_tools": "create_invoice"}]},
         "gold.json: queries[0]: primary_expected_tools must be a list; got a string 'create_invoice'"),
        ({"queries": [{**Q1, "history": [{"role": "bot", "content": "x"}]}]},
         "gold.json: queries[0]: history[0].role must be one of user, assistant, system, tool; got 'bot'"),
        ({"queries": [{**Q1, "forbiden_tools": []}]}, "gold.json: queries[0]: forbiden_tools: unknown field; did you mean 'forbidden_tools'?"),
        ({"queries": [{"id": "x", "intent": "read"}]}, "gold.json: queries[0]: missing required field 'query'"),
        ({"queries": [{**Q1, "no_match": "no"}]}, "gold.json: queries[0]: no_match must be a boolean; got a string"),
        ({"queries": [{**Q1, "acceptable_tools": ["a", "a"]}]},
         "gold.json: queries[0]: acceptable_tools names a tool more than once"),
        ({"queries": 3}, "gold.json: queries: a gold set needs 'queries', a list of query objects; got an integer"),
        ({"tools": []}, "gold.json: a gold set needs 'queries', a list of query objects; got nothing"),
        ([Q1, 5], "gold.json: [1]: the record must be an object; got an integer 5"),
        ({"queries": [{"id": "e", "query": "q", "relevant": "x"}]},
         "gold.json: queries[0]: relevant must be a list; got a string 'x'"),
        ({"queries": [{"id": "e", "query": "q", "relevant": [], "acceptable": 3}]},
         "gold.json: queries[0]: acceptable must be a list of tool names or a mapping; got an integer"),
    ],
)
def test_schema_errors_name_file_and_place(tmp_path: Path, doc, expected: str) -> None:
    with pytest.raises(DataError) as info:
        load_gold(write(tmp_path, "gold.json", json.dumps(doc)))
    text = str(info.value).removeprefix(f"{tmp_path}/")
    assert text.startswith(expected), text
    assert info.value.file.endswith("gold.json")


def test_jsonl_errors_carry_line_numbers(tmp_path: Path) -> None:
    good = json.dumps(Q1)
    with pytest.raises(DataError, match=r"a\.jsonl: line 3: intent must be one of"):
        load_gold(write(tmp_path, "a.jsonl", f"{good}\n\n{json.dumps({**Q2, 'intent': 'x'})}\n"))
    with pytest.raises(DataError, match=r"a\.jsonl: line 2: not valid JSON"):
        load_gold(write(tmp_path, "a.jsonl", f'{good}\n{{"id": 1,\n'))


def test_parse_errors_and_limits(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"line 1, column \d+: not valid JSON"):
        load_gold(write(tmp_path, "a.json", '{"queries": [}'))
    with pytest.raises(DataError, match="empty file"):
        load_gold(write(tmp_path, "e.json", "  \n"))
    with pytest.raises(DataError, match="the limit is 10"):
        load_gold(write(tmp_path, "big.json", json.dumps(DOC)), max_bytes=10)
    with pytest.raises(DataError, match="cannot read gold set"):
        load_gold(tmp_path / "missing.json")
    (tmp_path / "bin.json").write_bytes(b"\xff\xfe{")
    with pytest.raises(DataError, match="not UTF-8"):
        load_gold(tmp_path / "bin.json")
    with pytest.raises(DataError, match="must be an object with 'queries'"):
        load_gold(write(tmp_path, "s.yaml", "just a string\n"))


def test_semantic_errors_raise_unless_check_is_off(tmp_path: Path) -> None:
    doc = {"queries": [Q1, {**Q1, "query": "again"}]}
    p = write(tmp_path, "dup.json", json.dumps(doc))
    with pytest.raises(DataError, match=r"dup\.json: queries\[1\]: duplicate id 'inv-1' \(first at queries\[0\]\)"):
        load_gold(p)
    assert len(load_gold(p, check=False)) == 2


def test_schema_is_valid_and_shipped() -> None:
    import jsonschema

    schema = gold_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(DOC, schema)


SHARED_FILES = [
    ("hesabix/gold.dev.json", 282, False),
    ("metatool/queries_sample2k.jsonl", 2000, True),
    ("bfcl/queries.jsonl", 1050, True),
]


@pytest.mark.shared
@pytest.mark.parametrize(("rel", "count", "external"), SHARED_FILES)
def test_shared_benchmark_query_files_load(shared: Path, rel: str, count: int, external: bool) -> None:
    path = shared / "benchmarks" / rel
    gold = load_gold(path)
    assert len(gold) == count
    assert (EXTERNAL_NOTE in gold.notes) == external
    assert all(q.query.strip() for q in gold)
    if rel.startswith("hesabix"):
        assert gold.dataset_version == "2026-08-19.v1" and gold.catalog_version == "180.phase4"
        assert sum(q.no_match for q in gold) == 18
        convx = gold.by_id["convx-02"]
        assert convx.history == (("user", "مشتری علی رضایی را پیدا کن"),)
    if rel.startswith("bfcl"):
        q = gold.by_id["simple_python_1"]
        assert q.primary_expected_tools == ("math.factorial",) and q.acceptable_tools == ("calculate_factorial",)


def test_the_external_rows_fast_path_never_accepts_what_jsonschema_rejects() -> None:
    """The fast check encodes the shipped schema's external-row definitions (so it is on), and on random
    rows near the format it says "valid" only where jsonschema finds no error; errors stay jsonschema's."""
    import random

    from tooldisc.gold.loader import (
        _certainly_valid_external,
        _error_key,
        _fast_path_matches_schema,
        _row_errors,
        _validator,
    )

    assert _fast_path_matches_schema()
    rng = random.Random(7)
    values = ["", "t", "t", "u", 1, 1.0, True, None, [], {}, ["t"], ["t", "t"], ["", "u"], ["t", 2], {"t": 1}]
    keys = ["id", "query", "relevant", "acceptable", "category", "primary_expected_tools", "intent", "extra"]
    fast = 0
    for _ in range(400):
        row: object = {"id": "q", "query": "find it", "relevant": ["t"]}
        for k in rng.sample(keys, rng.randint(0, 3)):
            if rng.random() < 0.25:
                row.pop(k, None)  # type: ignore[union-attr]
            else:
                row[k] = rng.choice(values)  # type: ignore[index]
        if rng.random() < 0.02:
            row = rng.choice(values)
        want = sorted(_validator("query").iter_errors(row), key=_error_key)
        if _certainly_valid_external(row):
            fast += 1
            assert not want, row
        assert [e.message for e in _row_errors(row)] == [e.message for e in want]
    assert fast > 80  # the fast path is taken, not just never wrong


def test_slice_labels_from_native_labels_and_benchmark_rows(tmp_path) -> None:
    """A benchmark row's other scalar keys, and a native set's ``labels`` object, are slice labels;
    they never change the gold hash (they decide no measure)."""
    from tooldisc.evaluation.slices import slice_groups

    ext = tmp_path / "q.jsonl"
    ext.write_text('{"id": "a", "query": "x", "relevant": ["t"], "subset": "single", "difficulty": "easy", '
                   '"n_gold_calls": 2, "flags": ["f"], "score": 0.5, "split": null}\n'
                   '{"id": "b", "query": "y", "relevant": [], "subset": "multi", "n_gold_calls": 11}\n')
    gold = load_gold(ext)
    a, _b = gold.queries
    assert a.difficulty == "easy" and a.labels == (("n_gold_calls", 2), ("subset", "single"))
    assert a.label("subset") == "single" and a.label("flags") is None and a.label("score") is None
    groups = slice_groups(gold, ["subset", "n_gold_calls", "difficulty", "flags"])
    assert groups.groups["n_gold_calls"] == {"2": {"a"}, "11": {"b"}}  # integers in numeric order
    assert list(groups.groups["difficulty"]) == ["easy", "(none)"]
    assert groups.warnings and "--by flags" in groups.warnings[0]
    native = tmp_path / "n.json"
    native.write_text(json.dumps({"queries": [{"id": "a", "query": "x", "intent": "read", "primary_expected_tools": ["t"],
                                               "labels": {"team": "ops", "tier": 1, "beta": True}}]}))
    q = load_gold(native).queries[0]
    assert q.labels == (("beta", True), ("team", "ops"), ("tier", 1))
    assert slice_groups(load_gold(native), ["beta"]).groups == {"beta": {"true": {"a"}}}
    plain = native.with_name("plain.json")
    plain.write_text(json.dumps({"queries": [{"id": "a", "query": "x", "intent": "read",
                                              "primary_expected_tools": ["t"]}]}))
    assert load_gold(plain).hash == load_gold(native).hash and "labels" not in load_gold(plain).queries[0].to_dict()
    assert load_gold(native).queries[0].to_dict()["labels"] == {"beta": True, "team": "ops", "tier": 1}
    native.write_text(json.dumps({"queries": [{"id": "a", "query": "x", "intent": "read", "labels": {"x": [1]}}]}))
    with pytest.raises(DataError, match="labels"):
        load_gold(native)


def test_an_id_like_integer_field_is_not_a_slice(tmp_path) -> None:
    from tooldisc.errors import UsageError
    from tooldisc.evaluation.slices import MAX_INTEGER_VALUES, slice_groups

    p = tmp_path / "q.jsonl"
    p.write_text("".join(json.dumps({"id": f"q{i}", "query": "x", "relevant": [], "seq": i}) + "\n"
                         for i in range(MAX_INTEGER_VALUES + 1)))
    with pytest.raises(UsageError, match="--by seq: an integer field with 21 distinct values"):
        slice_groups(load_gold(p), ["seq"])
    with pytest.raises(UsageError, match="--by query"):
        slice_groups(load_gold(p), ["query"])
