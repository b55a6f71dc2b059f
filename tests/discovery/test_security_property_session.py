"""Multi-turn sessions never offer, return or run a tool the current request may not use (first half).

Each example plays a conversation of up to three turns over a fixed 36-tool catalog
(offers with history, ``search_tools``, guarded calls, approval turns through
``forced``) against the literal §4 oracle; 5,000 examples per file under CI, two files.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from tests.discovery.security_oracle import (
    SESSION_EXAMPLES,
    check_session,
    session_engine,
    turns,
    uniform_bits,
)


@pytest.fixture(scope="module")
def engine():
    return session_engine()


@settings(max_examples=SESSION_EXAMPLES, deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(ctx_code=uniform_bits(4), session_turns=turns)
def test_sessions_only_ever_use_what_the_current_request_authorizes(engine, ctx_code: int,
                                                                    session_turns: list) -> None:
    check_session(engine, ctx_code, session_turns)
