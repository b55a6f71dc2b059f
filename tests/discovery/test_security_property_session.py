"""Multi-turn sessions never offer, return or run a tool the current request may not use (first half).

Each example plays a conversation of up to three turns over a fixed 36-tool catalog
(offers with history, ``search_tools``, guarded calls, approval turns through
``forced``) against the literal §4 oracle; 5,000 examples per file under CI, two files.
"""

from __future__ import annotations

from tests.discovery.security_oracle import session_property

test_sessions_only_ever_use_what_the_current_request_authorizes = session_property(
    "test_sessions_only_ever_use_what_the_current_request_authorizes")
