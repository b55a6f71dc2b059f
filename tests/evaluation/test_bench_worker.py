"""A killed ``tooldisc bench`` leaves no worker running (issue 25 item 8).

Each catalog size is measured in a worker process. Killed with SIGKILL (nothing runs in
the parent) or SIGTERM, the parent must take its worker with it; the test finds the
worker through /proc, kills the parent, and waits for the worker to be gone (a zombie
waiting for its new parent to reap it counts as gone: it runs nothing).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")


def _workers(parent: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == parent and b"tooldisc.evaluation.bench" in cmd:
            out.append(int(entry))
    return out


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_a_killed_bench_leaves_no_worker_running(sig: signal.Signals) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "tooldisc.cli", "bench", "--tools", "100000", "--queries", "20",
                             "--no-baselines"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while not workers and time.monotonic() < deadline and proc.poll() is None:
            workers = _workers(proc.pid)
            time.sleep(0.05)
        assert workers, "the bench worker never started"
        time.sleep(0.5)  # the worker is past its start-up, generating the catalog
        proc.send_signal(sig)
        proc.wait(timeout=30)
        deadline = time.monotonic() + 15
        while any(_running(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(_running(w) for w in workers), f"worker {workers} still runs after the parent got {sig.name}"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for w in workers:  # never leave one behind, whatever failed above
            if _running(w):
                os.kill(w, signal.SIGKILL)
