"""No offer ever holds a tool the context may not see (DESIGN §4): second half.

A separate file so pytest-xdist runs the two halves on both cores; the test name
differs, so ``derandomize`` draws a different sequence of examples.
"""

from __future__ import annotations

from tests.discovery.security_oracle import offer_property

test_no_offer_holds_an_unauthorized_tool_more_examples = offer_property(
    "test_no_offer_holds_an_unauthorized_tool_more_examples")
