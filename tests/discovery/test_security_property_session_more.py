"""Multi-turn sessions against the §4 oracle: second half (own file, so xdist uses both cores)."""

from __future__ import annotations

from tests.discovery.security_oracle import session_property

test_sessions_only_ever_use_what_the_current_request_authorizes_more_examples = session_property(
    "test_sessions_only_ever_use_what_the_current_request_authorizes_more_examples")
