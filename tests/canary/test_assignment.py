from __future__ import annotations

import hashlib
import random

import pytest

from tooldisc.canary.assignment import arm_for, assign, bucket, bucket_sql, threshold
from tooldisc.canary.duckdb.ingest import connect
from tooldisc.errors import UsageError


@pytest.mark.parametrize(
    ("salt", "tenant", "user", "expected"),
    [
        # DESIGN §7 vectors
        ("s1", "t1", "u1", 8817),  # 277f5bec06189db1
        ("indexed-retrieval-v1", "biz-42", "user-7", 8234),  # 4f36ae6fc9038c7a
        # our own, from `printf %s KEY | sha256sum`, first 16 hex digits
        ("exp-a", "acme", "alice", 5119),  # 6b5dcb898aa7dcef
        ("exp-a", "acme", "bob", 5099),  # 4d6e05d999acd10b
        ("تست", "شرکت", "کاربر", 5302),  # 9db2ff1a971cd856 (raw UTF-8, no normalisation)
        ("s1", "t1", "u2", 488),  # b57de94bc9334f58
        ("x", "a b", "c\td", 7644),  # 5ce86efba22a431c
    ],
)
def test_vectors(salt: str, tenant: str, user: str, expected: int) -> None:
    assert bucket(salt, tenant, user) == expected


def test_arm_threshold_is_percent_times_100() -> None:
    assert threshold(5) == 500
    assert threshold(0.29) == 29
    assert threshold(12.5) == 1250
    assert arm_for(499, 5) == "experiment"
    assert arm_for(500, 5) == "control"
    assert assign("s1", "t1", "u2", 4.89).arm == "experiment"  # bucket 488 < 489
    assert assign("s1", "t1", "u2", 4.88).arm == "control"  # bucket 488 == 488
    assert assign("s1", "t1", "u1", 100).arm == "experiment"
    assert assign("s1", "t1", "u1", 0).arm == "control"


@pytest.mark.parametrize(("tenant", "user"), [("", "u"), ("t", "")])
def test_refuses_empty_ids(tenant: str, user: str) -> None:
    with pytest.raises(UsageError):
        bucket("s", tenant, user)


def test_ids_with_colons_are_accepted_and_keys_may_coincide() -> None:
    # key = salt:tenant:user, so ("a:b", "c") and ("a", "b:c") share a bucket (harmless)
    assert bucket("s", "a:b", "c") == bucket("s", "a", "b:c")
    raw = hashlib.sha256(b"s:a:b:c").digest()[:8]
    assert bucket("s", "a:b", "c") == int.from_bytes(raw, "big") % 10_000


@pytest.mark.parametrize("percent", [-1, 100.01, 5.001, float("nan")])
def test_refuses_bad_percent(percent: float) -> None:
    with pytest.raises(UsageError):
        threshold(percent)


def test_duckdb_sql_matches_python_for_100k_random_ids() -> None:
    rng = random.Random(7)
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789-_.é漢ی "
    pairs = [
        ("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12))),
         "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 16))))
        for _ in range(100_000)
    ]
    con = connect()
    import pyarrow as pa

    con.register("src", pa.table({"i": list(range(len(pairs))), "tenant_id": [p[0] for p in pairs],
                                  "user_id": [p[1] for p in pairs]}))
    got = con.execute(
        f"SELECT i, {bucket_sql('exp-ü', 'tenant_id', 'user_id')} FROM src ORDER BY i").fetchall()
    expected = [bucket("exp-ü", t, u) for t, u in pairs]
    assert [b for _, b in got] == expected
