"""No offer ever holds a tool the context may not see (DESIGN §4): first half of the examples."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from tests.discovery.security_oracle import EXAMPLES, MATRIX, check_requests, requests, tools


@settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(tool_codes=tools, reqs=requests)
def test_no_offer_holds_an_unauthorized_tool(tool_codes: list, reqs: list) -> None:
    check_requests(tool_codes, reqs)


def test_oracle_table_is_the_design_matrix() -> None:
    """Guard the literal table itself: read-only is always allowed, nothing else crosses rows."""
    assert all(row[0] for row in MATRIX.values())
    assert sum(sum(row) for row in MATRIX.values()) == 2 + 2 + 2 + 2 + 1 + 1
