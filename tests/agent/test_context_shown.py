"""Fail-closed defaults, outside serve: discover shows the effective context (issue 10, item 15)."""

from __future__ import annotations

import json

from tests.conftest import invoke_cli


def test_discover_prints_a_partial_context_plainly():
    r = invoke_cli("discover", "show invoices", "--role", "warehouse", "--k", "3")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == "context: no tenant; roles warehouse; permissions none; mode autonomous"
    j = invoke_cli("discover", "show invoices", "--role", "warehouse", "--k", "3", "--json")
    ctx = json.loads(j.stdout)["context"]
    assert ctx == {"tenant": None, "roles": ["warehouse"], "permissions": [], "mode": "autonomous",
                   "forced": [], "default": False}


def test_discover_says_when_the_default_context_is_used():
    r = invoke_cli("discover", "show invoices", "--k", "3")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("context: default — every role")
    j = invoke_cli("discover", "show invoices", "--k", "3", "--json")
    assert json.loads(j.stdout)["context"]["default"] is True
    assert "context: default" in j.stderr  # JSON on stdout stays clean; the note goes to stderr
