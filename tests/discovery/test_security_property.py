"""No offer ever holds a tool the context may not see (DESIGN §4): first half of the examples."""

from __future__ import annotations

from tests.discovery.security_oracle import MATRIX, offer_property

test_no_offer_holds_an_unauthorized_tool = offer_property("test_no_offer_holds_an_unauthorized_tool")


def test_oracle_table_is_the_design_matrix() -> None:
    """Guard the literal table itself: read-only is always allowed, nothing else crosses rows."""
    assert all(row[0] for row in MATRIX.values())
    assert sum(sum(row) for row in MATRIX.values()) == 2 + 2 + 2 + 2 + 1 + 1
