"""The one SparkSession of the test run, shared by every Spark test (local[2]).

It also serves Spark Connect on a free loopback port, so tests of the real CLI in a
subprocess (``--spark-remote``) reuse this JVM instead of starting their own. Without
pyspark (or Java) the Spark tests skip with the reason, except under CI=true, where
they must run.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest


@dataclass(frozen=True)
class SparkHandle:
    session: Any
    remote: str  # sc://127.0.0.1:PORT, served by the same JVM


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}, but CI=true: CI must run the Spark tests "
                    "(make test installs tooldisc[spark])")
    pytest.skip(reason)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def pyspark_installed() -> None:
    """For Spark tests that start no JVM (option and address checks)."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        _unavailable("needs pyspark: pip install 'tooldisc[spark]'")


@pytest.fixture(scope="session")
def spark_handle(pyspark_installed: None) -> Iterator[SparkHandle]:
    from tooldisc.canary.spark.session import SparkTarget, session
    from tooldisc.errors import UsageError

    port = free_port()
    conf = {
        "spark.plugins": "org.apache.spark.sql.connect.SparkConnectPlugin",
        "spark.connect.grpc.binding.address": "127.0.0.1",
        "spark.connect.grpc.binding.port": str(port),
        # Test data is small: few shuffle partitions, a JIT that starts fast.
        "spark.sql.shuffle.partitions": "2",
        "spark.default.parallelism": "2",
        "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
        # Many verdicts share this JVM: Spark's 100 compiled classes would be evicted
        # and compiled again (~1 s of Janino per verdict); a bigger cache changes no plan.
        "spark.sql.codegen.cache.maxEntries": "1000",
    }
    try:
        cm = session(SparkTarget(master="local[2]", timeout=600), conf)
        spark = cm.__enter__()
    except UsageError as exc:
        _unavailable(f"Spark could not start here: {exc}")
    try:
        yield SparkHandle(session=spark, remote=f"sc://127.0.0.1:{port}")
    finally:
        cm.__exit__(None, None, None)


@pytest.fixture()
def spark(spark_handle: SparkHandle) -> Any:
    return spark_handle.session
