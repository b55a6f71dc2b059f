"""``tooldisc serve`` over stdio as a script drives it: requests piped in, stdin closed at once."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("mcp")

INIT = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"}]


def test_every_request_piped_in_is_answered_before_the_server_stops() -> None:
    """The SDK stopped at the end of its input: of six requests piped in with stdin then closed, three or four
    were answered (three trials out of three). Every one is now, a bad one included, and the process ends."""
    requests = [{"jsonrpc": "2.0", "id": 7, "method": "no/such"},
                *({"jsonrpc": "2.0", "id": i, "method": "tools/list"} for i in range(10, 16)),
                {"jsonrpc": "2.0", "id": 20, "method": "tools/call",
                 "params": {"name": "search_tools", "arguments": {"query": "list unpaid invoices"}}}]
    done = subprocess.run([sys.executable, "-m", "tooldisc.cli", "serve", "--allow-default-context"],
                          input="\n".join(json.dumps(m) for m in [*INIT, *requests]) + "\n",
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-500:]
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert sorted(a["id"] for a in answers) == [1, 7, 10, 11, 12, 13, 14, 15, 20]
    assert next(a for a in answers if a["id"] == 7)["error"]["code"] == -32601
    assert not next(a for a in answers if a["id"] == 20)["result"].get("isError")
