"""Interleaving on a live surface: which requests join, and the credit of their tool calls.

:class:`Interleave` configures an experiment that judges a challenger ranker B against
the serving ranker A on live traffic (``tooldisc serve --interleave B``,
``AgentService(interleave=…)``). Which requests join is DESIGN §7 assignment:

* when the host passes a user id (MCP ``_meta["tooldisc/user"]``) and the context names a
  tenant, the bucket of ``salt:tenant:user`` — a user is interleaved on every request or
  on none (the id is used for this bucket only and never logged);
* otherwise the request's own bucket, ``salt:request_id`` (:func:`tooldisc.canary.assignment.request_bucket`).

A joined request is offered :meth:`Discoverer.discover_interleaved` with coins seeded by
its request id (never by the user's bucket: one user's coin flips would repeat). The
request id is the event id of the request's telemetry row (schema version 3), so a
replay of that row's id gives the same offer. :class:`Credit` collects, per tool call the
guard lets through, the team of the called tool (``A``/``B``, or ``-`` for a tool outside
the offer, e.g. found by ``search_tools``); the row is written when the request ends
(the next request starts, or the service closes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tooldisc import values
from tooldisc.agent.sink import Arm
from tooldisc.discovery.config import RankerConfig
from tooldisc.discovery.model import Context


@dataclass(frozen=True)
class Interleave:
    """A challenger ranker B interleaved with the serving ranker A on ``percent`` of requests.

    ``config`` is B's ranker config (None: A's own, e.g. when only ``learned`` differs);
    ``learned`` B's learned file (:class:`~tooldisc.discovery.learned.Learned`) or None.
    ``salt`` defaults to the experiment name (each experiment its own salt).
    """

    experiment: str
    percent: float
    config: RankerConfig | None = None
    learned: Any = None
    salt: str | None = None

    def __post_init__(self) -> None:
        from tooldisc.canary.assignment import threshold
        from tooldisc.discovery.learned import Learned

        owner = "Interleave"
        values.string(owner, "experiment", self.experiment)
        values.number(owner, "percent", self.percent, 0, 100)
        threshold(self.percent)  # 0.01 steps
        values.instance(owner, "config", self.config, RankerConfig)
        values.instance(owner, "learned", self.learned, Learned)
        values.string(owner, "salt", self.salt, optional=True)

    @property
    def key(self) -> str:
        return self.salt if self.salt is not None else self.experiment

    def arm(self, request_id: str, context: Context, user: str | None) -> Arm:
        """The request's arm: ``experiment`` (interleaved) when its bucket is below the percent."""
        from tooldisc.canary.assignment import arm_for, bucket, request_bucket

        if user and context.tenant:
            b = bucket(self.key, context.tenant, user)
        else:
            b = request_bucket(self.key, request_id)
        return Arm(self.experiment, float(self.percent), b, arm_for(b, self.percent))


def challenger(spec: str) -> tuple[RankerConfig | None, Any]:
    """``--interleave B``: (B's config, B's learned file) from ``default`` (the shipped config),
    a ranker config file, or a learned file (``tooldisc learn``; B is then the serving config
    with it, so its config is None)."""
    import json

    from tooldisc.discovery.catalog.io import read_text
    from tooldisc.discovery.config import DEFAULT_NAME, load_config
    from tooldisc.discovery.learned import FORMAT
    from tooldisc.discovery.learned.read import load_learned

    if spec == DEFAULT_NAME:
        return load_config(), None
    text = read_text(spec, max_bytes=64 * 1024 * 1024, what="--interleave file")
    try:
        doc = json.loads(text)
    except ValueError:
        doc = None
    if isinstance(doc, dict) and doc.get("format") == FORMAT:
        return None, load_learned(spec)
    return load_config(spec), None


@dataclass
class Credit:
    """One interleaved request in progress: its offer, arm, schema tokens and credited calls."""

    interleaved: Any  # tooldisc.discovery.rank.interleave.InterleavedOffer
    arm: Arm
    catalog: Any
    schema_tokens: int = 0
    calls: list[str] = field(default_factory=list)

    def call(self, name: str) -> None:
        """Credit one tool call the guard let through (``-``: not a tool of this offer)."""
        self.calls.append(self.interleaved.team_of(name) or "-")

    @property
    def credit(self) -> str:
        return "".join(self.calls)
