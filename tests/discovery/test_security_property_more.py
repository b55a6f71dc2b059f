"""No offer ever holds a tool the context may not see (DESIGN §4): second half.

A separate file so pytest-xdist runs the two halves on both cores; the test name
differs, so ``derandomize`` draws a different sequence of examples.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from tests.discovery.security_oracle import EXAMPLES, check_requests, requests, tools


@settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(tool_codes=tools, reqs=requests)
def test_no_offer_holds_an_unauthorized_tool_more_examples(tool_codes: list, reqs: list) -> None:
    check_requests(tool_codes, reqs)
