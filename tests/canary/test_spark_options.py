"""--engine and --spark-* through the real CLI: bad values and dead addresses fail fast.

None of these starts a JVM (the address is checked before Spark launches, and a
silent Spark Connect endpoint is bounded by --spark-timeout), so they are cheap; except the
one end-to-end test of the default local mode, which is here rather than beside the shared
JVM so that ``pytest -n 2 --dist loadfile`` runs it in parallel with test_spark.py.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.conftest import run_cli

SIM = ("canary", "simulate", "--salt", "s1", "--percent", "5", "--ids", "100")


def one_line_exit_2(res) -> str:
    assert res.returncode == 2, (res.returncode, res.stderr)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in res.stderr, res.stderr
    assert len(lines[0].encode()) <= 300
    return lines[0]


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens once the socket is closed


@pytest.fixture()
def silent_server() -> Iterator[int]:
    """Accepts TCP connections and never answers (a firewall or a wrong service)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join(2)
        for conn in held:
            conn.close()
        server.close()


@pytest.mark.parametrize(("args", "needle"), [
    (("--spark-master", "local[4]"), "--spark-master need --engine spark"),
    (("--engine", "flink"), "--engine must be one of duckdb, spark"),
    (("--engine", "spark", "--spark-master", "local[2]", "--spark-remote", "sc://h:1"),
     "at most one of --spark-master and --spark-remote"),
    (("--engine", "spark", "--spark-remote", "http://host:15002"), "must look like sc://host:15002"),
    (("--engine", "spark", "--spark-master", "mars://x"), "--spark-master must be local[N]"),
    (("--engine", "spark", "--spark-conf", "novalue"), "--spark-conf must be KEY=VALUE"),
    (("--engine", "spark", "--spark-timeout", "0"), "--spark-timeout must be"),
])
def test_bad_engine_options(args: tuple[str, ...], needle: str) -> None:
    assert needle in one_line_exit_2(run_cli(*SIM, *args))


@dataclass(frozen=True)
class Refused:
    """The CLI against a closed port: what it printed, and how long it took."""

    port: int
    line: str
    seconds: float


def _refused(flag: str) -> Refused:
    port = closed_port()
    url = f"spark://127.0.0.1:{port}" if flag == "--spark-master" else f"sc://127.0.0.1:{port}"
    t0 = time.monotonic()
    line = one_line_exit_2(run_cli(*SIM, "--engine", "spark", flag, url, timeout=60))
    return Refused(port, line, time.monotonic() - t0)


@pytest.fixture(scope="module")
def refused_remote(pyspark_installed: None) -> Refused:
    """One run, shared: the unreachable-remote test checks it, and the silent-endpoint
    test takes its time as the command's start-up cost at the current machine load."""
    return _refused("--spark-remote")


@pytest.mark.parametrize("flag", ["--spark-master", "--spark-remote"])
def test_unreachable_master_or_remote_fails_fast(request: pytest.FixtureRequest, flag: str) -> None:
    run = request.getfixturevalue("refused_remote") if flag == "--spark-remote" else _refused(flag)
    assert run.seconds < 30
    assert "is unreachable" in run.line and f"127.0.0.1:{run.port}" in run.line


@pytest.fixture()
def hung_grpc_server() -> Iterator[int]:
    """Speaks gRPC (the handshake completes) but never answers a call: a wedged server."""
    from concurrent import futures

    import grpc

    release = threading.Event()

    class Hang(grpc.GenericRpcHandler):
        def service(self, details: Any) -> Any:
            return grpc.unary_unary_rpc_method_handler(lambda req, ctx: release.wait(60))

    server = grpc.server(futures.ThreadPoolExecutor(4))
    server.add_generic_rpc_handlers((Hang(),))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield port
    finally:
        release.set()
        server.stop(0)


@pytest.mark.parametrize("server", ["silent_server", "hung_grpc_server"])
def test_silent_connect_endpoint_is_bounded_by_the_timeout(refused_remote: Refused, server: str,
                                                            request: pytest.FixtureRequest) -> None:
    """A port that never speaks gRPC, and one that never answers a call: both end within
    the timeout plus start-up, with one line (no hang in the client's exit hook).

    Start-up (Python, pyspark's import) is what the same command took against a closed
    port in this sitting, so machine load stretches both sides alike; on top of it the
    command may wait the 3 s timeout and then has 5 s to close its channel and exit (a
    hang would take the subprocess timeout). It must also have waited the timeout out."""
    port = request.getfixturevalue(server)
    t0 = time.monotonic()
    line = one_line_exit_2(run_cli(*SIM, "--engine", "spark", "--spark-remote",
                                   f"sc://127.0.0.1:{port}", "--spark-timeout", "3",
                                   timeout=60))
    seconds = time.monotonic() - t0
    assert 3 <= seconds < refused_remote.seconds + 3 + 5, (seconds, refused_remote.seconds)
    assert "did not answer within 3 s" in line


def test_missing_pyspark_names_the_extra(tmp_path) -> None:
    # A stand-in package that fails to import, as if pyspark were not installed.
    (tmp_path / "pyspark").mkdir()
    (tmp_path / "pyspark" / "__init__.py").write_text("raise ImportError('not installed')\n")
    res = run_cli(*SIM, "--engine", "spark", env={"PYTHONPATH": str(tmp_path)})
    assert "pip install 'tooldisc[spark]'" in one_line_exit_2(res)


def test_cli_local_mode_is_quiet_and_matches_duckdb(pyspark_installed: None, tmp_path) -> None:
    """The default (local[2], a JVM of its own, kept tiny): ``canary simulate --ids-file`` on
    Parquet gives the same JSON as DuckDB (in-process), and no JVM noise on stderr.

    The one CLI run that starts a JVM; the CLI through Spark Connect (``verdict --table``,
    an unreadable path) is tested in test_spark.py against the shared JVM.
    """
    import json
    from dataclasses import asdict

    import pyarrow as pa
    import pyarrow.parquet as pq

    from tooldisc.canary.duckdb.simulate import simulate

    ids = tmp_path / "ids.parquet"
    pq.write_table(pa.table({"tenant_id": [f"t-{i % 37}é" for i in range(2000)],
                             "user_id": [f"用户-{i}" for i in range(2000)]}), ids)
    local = run_cli("canary", "simulate", "--salt", "s1", "--percent", "5", "--ids-file", str(ids),
                    "--json", "--engine", "spark", "--spark-conf",
                    "spark.driver.extraJavaOptions=-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
                    timeout=600)
    assert local.returncode == 0, local.stderr
    a = json.loads(json.dumps(asdict(simulate([("s1", 5.0)], ids_file=str(ids)))))
    b = json.loads(local.stdout)
    assert (a.pop("engine"), b.pop("engine")) == ("duckdb", "spark")
    assert a == b and b["ids"] == 2000
    assert local.stderr == ""
