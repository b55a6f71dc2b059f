"""The catalog's and security index's compact name look-ups answer as the dicts (and int64 arrays) they replaced."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tooldisc.discovery.catalog import Catalog, NameIndex, catalog_from_tools
from tooldisc.discovery.config import load_config
from tooldisc.discovery.indexes.index import build_index
from tooldisc.discovery.model import Tool
from tooldisc.discovery.security import SecurityIndex, index_dtype

# Names hold no control or format character (the catalog's rule, and Tool's).
_NAMES = st.lists(st.text(st.characters(blacklist_categories=("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp")) | st.just("\u200c"),
                          min_size=1, max_size=6), min_size=0, max_size=30, unique=True)


@settings(max_examples=60, deadline=None)
@given(_NAMES, st.text(max_size=6))
def test_name_index_is_the_dict_it_replaced(names: list[str], other: str) -> None:
    security = SecurityIndex([Tool(name=n) for n in names])
    reference = {n: i for i, n in enumerate(names)}
    index = security.name_to_idx
    assert isinstance(index, NameIndex)
    assert dict(index) == reference and list(index) == names and len(index) == len(names)
    assert (other in index) == (other in reference)
    assert index.get(other, -1) == reference.get(other, -1)
    if other not in reference:
        with pytest.raises(KeyError):
            index[other]
    assert 3 not in index  # type: ignore[operator]  # not a name: absent, not an error
    tools = tuple(Tool(name=n) for n in names)
    by_name = Catalog(tools=tools).by_name
    assert dict(by_name) == {t.name: t for t in tools} and (other in by_name) == (other in reference)
    assert by_name.get(other) is (tools[reference[other]] if other in reference else None)


def test_a_repeated_name_finds_the_last_tool_as_a_dict_did() -> None:
    tools = (Tool(name="a", description="1"), Tool(name="b"), Tool(name="a", description="2"))
    assert Catalog(tools=tools).by_name["a"].description == "2"
    assert NameIndex.of(["a", "b", "a"])["a"] == 2


def test_arrays_are_narrow_and_name_rank_is_name_order() -> None:
    names = ["zeta", "alpha", "Beta", "alpha_2", "گزارش", "a"]
    catalog = catalog_from_tools([Tool(name=n, roles=("admin", n), permissions=("read",), side_effect="none")
                                  for n in names])
    ix = build_index(catalog, load_config(None), backend="numpy")
    reference = np.empty(len(names), dtype=np.int64)
    reference[sorted(range(len(names)), key=names.__getitem__)] = np.arange(len(names))
    assert ix.name_rank.dtype == np.int32 and np.array_equal(ix.name_rank, reference)
    sec = ix.security
    for arr in (sec._role_tool, sec._role_id, sec._perm_tool, sec._perm_id, sec.perm_count):
        assert arr.dtype == np.int32
    assert len(sec._role_tool) == 2 * len(names) and len(sec._perm_tool) == len(names)
    assert all(sec.name_to_idx[n] == i for i, n in enumerate(names))
    assert sec.name_to_idx is catalog.name_index  # one name order for the catalog and its index
    assert index_dtype(2**31 - 1) is np.int32 and index_dtype(2**31) is np.int64  # the guard for larger catalogs


def test_empty_catalog_has_an_empty_name_index() -> None:
    ix = build_index(catalog_from_tools([]), load_config(None), backend="numpy")
    assert len(ix.security.name_to_idx) == 0 and "x" not in ix.security.name_to_idx
    assert ix.name_rank.shape == (0,)
