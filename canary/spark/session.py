"""Where Spark runs and how a session is opened: local mode, a master URL, or Spark Connect.

The Spark engine needs one :class:`SparkSession` per command. Opening it is the only
step that can hang (a master that never answers, a Connect endpoint behind a firewall,
a JVM that cannot start), so every path is bounded: a TCP check of every named
host first (fails in seconds), then session start and a one-row probe job in a
daemon thread with a deadline. Either failure is one line naming the target, exit 2.

The JVM's own output (log4j, progress bars, JDK warnings) goes to a log file, never
to the user's stderr. Under ``spark-submit`` the JVM already exists: its master and
configuration are used as given and nothing is launched.

pyspark is imported inside the functions, so ``tooldisc --help`` never pays for it.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit

from tooldisc.errors import MissingExtraError, UsageError

DEFAULT_MASTER = "local[2]"
DEFAULT_CONNECT_PORT = 15002
DEFAULT_TIMEOUT = 180.0
APP_NAME = "tooldisc-canary"
_LOCAL = re.compile(r"local(\[(\*|\d+)(,\s*\d+)?\])?")
# Deterministic, small-job friendly settings; the user's --spark-conf wins over these.
BASE_CONF: dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.session.timeZone": "UTC",
    # Hive partition values stay strings, as DuckDB reads them (no 10 → int guessing).
    "spark.sql.sources.partitionColumnTypeInference.enabled": "false",
    "spark.sql.adaptive.enabled": "true",
    # The validation SELECT is one wide CASE per row; Catalyst's constraint inference over
    # it grows combinatorially (minutes of planning) and buys nothing for one scan.
    "spark.sql.constraintPropagation.enabled": "false",
}

T = TypeVar("T")


@dataclass(frozen=True)
class SparkTarget:
    """Where to run: ``master`` (local[N], spark://…, yarn, k8s://…) or ``remote`` (sc://…).

    ``master=None`` means local[2], or the master ``spark-submit`` gave. ``conf`` holds
    extra ``key=value`` settings (``--spark-conf``); ``timeout`` bounds session start.
    """

    master: str | None = None
    remote: str | None = None
    timeout: float = DEFAULT_TIMEOUT
    conf: tuple[tuple[str, str], ...] = ()

    def describe(self) -> str:
        if self.remote is not None:
            return f"Spark Connect {self.remote}"
        return f"Spark master {self.master or DEFAULT_MASTER}"


def target_from_options(master: str | None, remote: str | None, timeout: float | None,
                        conf: list[str] | None) -> SparkTarget:
    """Check the ``--spark-*`` options and build a :class:`SparkTarget`."""
    if master is not None and remote is not None:
        raise UsageError("give at most one of --spark-master and --spark-remote")
    seconds = DEFAULT_TIMEOUT if timeout is None else float(timeout)
    if not seconds > 0:
        raise UsageError(f"--spark-timeout must be a number of seconds > 0; got {timeout}")
    pairs = []
    for item in conf or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--spark-conf must be KEY=VALUE; got {item!r}")
        pairs.append((key.strip(), value))
    target = SparkTarget(master=master, remote=remote, timeout=seconds, conf=tuple(pairs))
    endpoints(target)  # refuses a malformed URL before anything starts
    return target


def endpoints(target: SparkTarget) -> list[tuple[str, int]]:
    """The (host, port) pairs a target must reach; none for local, yarn or k8s."""
    if target.remote is not None:
        parts = urlsplit(target.remote)
        if parts.scheme != "sc" or not parts.hostname:
            raise UsageError(f"--spark-remote must look like sc://host:15002; got {target.remote!r}")
        try:
            port = parts.port or DEFAULT_CONNECT_PORT
        except ValueError as exc:
            raise UsageError(f"--spark-remote has a bad port: {target.remote!r}") from exc
        return [(parts.hostname, port)]
    master = target.master
    if master is None or _LOCAL.fullmatch(master):
        return []
    if master.startswith("spark://"):
        out = []
        for hostport in master[len("spark://"):].split(","):
            host, sep, port = hostport.rpartition(":")
            if not sep or not host or not port.isdigit():
                raise UsageError(f"--spark-master must look like spark://host:7077; got {master!r}")
            out.append((host.strip("[]"), int(port)))
        return out
    if master == "yarn" or master.startswith(("k8s://", "mesos://")):
        return []  # their own clients locate the cluster; the probe job bounds them
    raise UsageError(f"--spark-master must be local[N], spark://host:port, yarn or k8s://…; "
                     f"got {master!r}")


def check_reachable(target: SparkTarget) -> None:
    """A TCP connect to each named host, so a wrong or dead address fails in seconds."""
    pairs = endpoints(target)
    if not pairs:
        return
    wait = min(10.0, target.timeout)
    errors = []
    for host, port in pairs:
        try:
            with socket.create_connection((host, port), timeout=wait):
                return  # one live master (of an HA list) is enough
        except OSError as exc:
            errors.append(f"{host}:{port} ({exc.strerror or type(exc).__name__})")
    raise UsageError(f"{target.describe()} is unreachable: {', '.join(errors)}")


def local_shuffle(master: str) -> dict[str, str]:
    """Shuffle partitions for local mode: two per thread, not Spark's cluster-sized 200.

    Measured (docs/canary.md "At scale"): with 200, every shuffle of a verdict (the
    duplicate check, the aggregation, the value counts behind the quantiles) writes and
    schedules 200 partitions per map task on two cores; with 4 the three shuffles of a
    1M-event verdict took 30% less CPU (22 → 16 s). A cluster keeps its own setting.
    """
    m = _LOCAL.fullmatch(master)
    threads = m.group(2) if m else None
    n = (os.cpu_count() or 1) if threads in (None, "*") else int(threads)
    if m and m.group(1) is None:  # plain "local": one thread
        n = 1
    return {"spark.sql.shuffle.partitions": str(max(2, 2 * n))}


def _bounded(fn: Callable[[], T], seconds: float, what: str, shown: float | None = None) -> T:
    """``fn()`` in a daemon thread; a deadline turns a hang into a one-line error
    (naming ``shown`` seconds, the user's whole budget, when part was spent before)."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=run, name="tooldisc-spark-start", daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        raise UsageError(f"{what} did not answer within {shown or seconds:g} s "
                         "(see --spark-timeout)")
    if "error" in box:
        raise box["error"]
    return box["value"]


def _import_pyspark() -> None:
    # pyspark warns about the pandas version on import and again on first use (from
    # any thread); users cannot act on it, so only that warning is silenced.
    warnings.filterwarnings("ignore", message=r"PySpark does not yet fully support pandas",
                            category=FutureWarning)
    try:
        import pyspark.sql  # noqa: F401
    except ImportError as exc:
        raise MissingExtraError("--engine spark", "spark", "pyspark") from exc


def _start_classic(target: SparkTarget, conf: Mapping[str, str], log_path: str) -> Any:
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway
    from pyspark.sql import SparkSession

    if "PYSPARK_GATEWAY_PORT" in os.environ:  # under spark-submit: its JVM and settings
        builder = SparkSession.builder.appName(APP_NAME)
        if target.master is not None:
            builder = builder.master(target.master)
        for key, value in conf.items():
            builder = builder.config(key, value)
        return builder.getOrCreate()
    spark_conf = SparkConf().setAppName(APP_NAME).setMaster(target.master or DEFAULT_MASTER)
    for key, value in conf.items():
        spark_conf.set(key, value)
    with open(log_path, "ab") as log:  # the JVM inherits the descriptor; we may close ours
        gateway = launch_gateway(spark_conf, popen_kwargs={"stdout": log, "stderr": log})
    context = SparkContext(conf=spark_conf, gateway=gateway)
    return SparkSession(context)


def check_connect_ready(target: SparkTarget, seconds: float) -> None:
    """Wait, at most ``seconds``, for the Connect endpoint to complete the gRPC handshake.

    A TCP port that accepts and never speaks HTTP/2 (a firewall, a wrong service) would
    otherwise hang the client's first call, and its exit hook after it. Checked on a
    channel of our own, closed afterwards, before the client exists.
    """
    import grpc
    from pyspark.sql.connect.client import DefaultChannelBuilder

    assert target.remote is not None
    channel = DefaultChannelBuilder(target.remote).toChannel()
    ready = grpc.channel_ready_future(channel)
    try:
        ready.result(timeout=seconds)
    except grpc.FutureTimeoutError:
        raise UsageError(f"{target.describe()} did not answer within {seconds:g} s "
                         "(see --spark-timeout)") from None
    finally:
        ready.cancel()
        channel.close()


def _close_stuck_remote() -> None:
    """Close the Connect client a timed-out start left behind: its RPCs end, and its exit
    hook (which would call the server again) returns at once."""
    from pyspark.sql.connect.session import SparkSession

    with contextlib.suppress(Exception):
        stuck = SparkSession._get_default_session()
        if stuck is not None:
            stuck.client.close()


def _start_remote(target: SparkTarget, conf: Mapping[str, str]) -> Any:
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.remote(target.remote)
    for key, value in conf.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


def start(target: SparkTarget, extra_conf: Mapping[str, str] | None = None,
          log_path: str | None = None) -> Any:
    """A live SparkSession for ``target`` that has run a one-row job, within the deadline.

    ``extra_conf`` sits between the base settings and ``target.conf`` (the user's).
    """
    _import_pyspark()
    check_reachable(target)
    # Under spark-submit the master is the one it gave (maybe a cluster): never pin loopback.
    submitted = "PYSPARK_GATEWAY_PORT" in os.environ and target.master is None
    local = (target.remote is None and not submitted
             and _LOCAL.fullmatch(target.master or DEFAULT_MASTER))
    # Local mode listens on loopback only: nothing outside this machine needs the driver.
    loopback = {"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"}
    local_conf = {**loopback, **local_shuffle(target.master or DEFAULT_MASTER)} if local else {}
    conf = {**BASE_CONF, **local_conf, **(extra_conf or {}), **dict(target.conf)}
    if log_path is None:
        log_path = os.path.join(tempfile.gettempdir(), f"tooldisc-spark-{os.getpid()}.log")

    def open_and_probe() -> Any:
        if target.remote is not None:
            # Server-side settings such as the time zone are per session in Connect.
            session = _start_remote(target, {k: v for k, v in conf.items()
                                             if k.startswith("spark.sql.")})
        else:
            session = _start_classic(target, conf, log_path)
            session.sparkContext.setLogLevel("ERROR")
        session.range(1).count()
        return session

    try:
        if target.remote is not None:
            started = time.monotonic()
            check_connect_ready(target, target.timeout)
            remaining = max(0.1, target.timeout - (time.monotonic() - started))
            try:
                return _bounded(open_and_probe, remaining, target.describe(), target.timeout)
            except UsageError:
                _close_stuck_remote()
                raise
        return _bounded(open_and_probe, target.timeout, target.describe())
    except UsageError:
        raise
    except Exception as exc:
        first = " ".join(str(exc).split())[:120]
        where = "" if target.remote is not None else f" (JVM log: {log_path})"
        raise UsageError(f"{target.describe()} could not start: {first}{where}") from exc


@contextlib.contextmanager
def session(target: SparkTarget, extra_conf: Mapping[str, str] | None = None) -> Iterator[Any]:
    """A session for one command, stopped afterwards (a Connect session is only released)."""
    fd, log_path = tempfile.mkstemp(prefix="tooldisc-spark-", suffix=".log")
    os.close(fd)
    spark = start(target, extra_conf, log_path)  # on failure the log stays for diagnosis
    try:
        yield spark
    finally:
        with contextlib.suppress(Exception):
            spark.stop()
        with contextlib.suppress(OSError):
            os.unlink(log_path)
