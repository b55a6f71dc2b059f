"""Stable arm assignment: which arm a (tenant, user) pair lands in for one experiment.

The layout is fixed by DESIGN §7 and must never drift, because production services,
offline simulations and DuckDB SQL all compute it independently:

    key    = UTF-8 bytes of salt + ":" + tenant_id + ":" + user_id
    bucket = first 8 bytes of SHA-256(key), big-endian unsigned, mod 10,000
    arm    = "experiment" if bucket < percent × 100 else "control"

Ids are raw UTF-8, never normalised. An empty id is refused. Ids may contain ``:``:
two pairs that concatenate to the same key (``a:b`` + ``c`` and ``a`` + ``b:c``) then
share a bucket, which is harmless for assignment (a bucket is not an identity).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from tooldisc.errors import UsageError
from tooldisc.params import Text, checked

BUCKETS = 10_000
ARMS = ("control", "experiment")
SEPARATOR = ":"


@dataclass(frozen=True)
class Assignment:
    """The outcome of assigning one (tenant, user) pair; ids are not kept."""

    salt: str
    percent: float
    bucket: int
    arm: str


ID = Text()  # the rulebook's constraint on a salt and an id: any non-empty str, hashed as given


def check_id(value: str, name: str) -> None:
    """Refuse an empty id (``:`` is allowed; see the module docstring); ``name``: the parameter's."""
    checked(ID, value, name, UsageError)


def check_salt(salt: str) -> None:
    """A salt must not be empty."""
    checked(ID, salt, "salt", UsageError)


def threshold(percent: float) -> int:
    """Buckets below this go to the experiment: ``percent × 100``, exact to 0.01 %.

    Decimal arithmetic keeps 0.29 % → 29 rather than 28.999… → 28.
    """
    try:
        dec = Decimal(str(percent))
    except (InvalidOperation, ValueError) as exc:
        raise UsageError(f"percent must be a number in [0, 100]; got {percent!r}") from exc
    if not dec.is_finite() or dec < 0 or dec > 100:
        raise UsageError(f"percent must be a number in [0, 100]; got {percent!r}")
    scaled = dec * 100
    if scaled != scaled.to_integral_value():
        raise UsageError(f"percent must be in steps of 0.01; got {percent!r}")
    return int(scaled)


def bucket(salt: str, tenant_id: str, user_id: str) -> int:
    """Bucket in [0, 10000) of one (tenant, user) pair under ``salt``."""
    check_salt(salt)
    check_id(tenant_id, "tenant_id")
    check_id(user_id, "user_id")
    key = f"{salt}{SEPARATOR}{tenant_id}{SEPARATOR}{user_id}".encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "big") % BUCKETS


def request_bucket(salt: str, request_id: str) -> int:
    """Bucket in [0, 10000) of one request under ``salt`` (interleaving without a user id).

    key = UTF-8 of ``salt + ":" + request_id``, then as :func:`bucket`: each request
    joins on its own, independently of the user (whose bucket would join all of theirs).
    """
    check_salt(salt)
    check_id(request_id, "request_id")
    key = f"{salt}{SEPARATOR}{request_id}".encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "big") % BUCKETS


def arm_for(bucket_value: int, percent: float) -> str:
    """``experiment`` when the bucket is below ``percent × 100``, else ``control``."""
    return ARMS[1] if bucket_value < threshold(percent) else ARMS[0]


def assign(salt: str, tenant_id: str, user_id: str, percent: float) -> Assignment:
    """Bucket and arm for one pair; the one function production code should call."""
    thr = threshold(percent)
    b = bucket(salt, tenant_id, user_id)
    return Assignment(salt=salt, percent=float(percent), bucket=b, arm=ARMS[int(b < thr)])


def sql_literal(text: str) -> str:
    """A SQL string literal (single quotes doubled)."""
    return "'" + text.replace("'", "''") + "'"


def bucket_sql(salt: str, tenant_expr: str, user_expr: str) -> str:
    """DuckDB SQL for the same bucket over two VARCHAR expressions.

    ``sha256`` returns lowercase hex; its first 16 hex digits are the first 8 bytes,
    and a ``0x…`` string casts to UBIGINT big-endian, exactly as in :func:`bucket`.
    """
    key = f"{sql_literal(salt + SEPARATOR)} || {tenant_expr} || ':' || {user_expr}"
    return f"(('0x' || substr(sha256({key}), 1, 16))::UBIGINT % {BUCKETS})::INTEGER"
