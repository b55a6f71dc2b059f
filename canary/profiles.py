"""Gate profiles as data: one record per profile, so a profile or a gate is added in one place.

A :class:`Profile` names its row schema, how it asks an engine for evidence, its
gates (functions over frozen evidence) and its synthetic scenarios. The CLI and
:func:`tooldisc.canary.verdict.run_verdict` look profiles up here and never branch
on a profile's name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tooldisc.canary.config import GateConfig
from tooldisc.canary.engine import Engine
from tooldisc.canary.events import EVENT_SCHEMA, RowSchema
from tooldisc.canary.gates import GateSpec, Verdict, fix_reported
from tooldisc.params import Options, checked


@dataclass(frozen=True)
class Profile:
    name: str
    schema: RowSchema
    # (engine, experiment, since, until, config) → frozen evidence
    evidence: Callable[[Engine, str, datetime | None, datetime | None, GateConfig], Any]
    judge: Callable[[Any, str, GateConfig], Verdict]
    gates: tuple[GateSpec, ...]  # in the order the verdict lists them
    scenarios: Mapping[str, Any]
    default_experiment: str

    @property
    def gate_names(self) -> tuple[str, ...]:
        return tuple(g.name for g in self.gates)


def _canary_evidence(engine: Engine, experiment: str, since: datetime | None,
                     until: datetime | None, cfg: GateConfig) -> Any:
    from tooldisc.canary.aggregate import aggregate

    return aggregate(engine, experiment, since, until, segments=cfg.segments,
                     latency_p_bp=round(cfg.latency_quantile * 10_000))


def _canary_judge(ev: Any, experiment: str, cfg: GateConfig) -> Verdict:
    from tooldisc.canary.gates import judge

    return judge(ev, cfg)


def _shadow_evidence(engine: Engine, experiment: str, since: datetime | None,
                     until: datetime | None, cfg: GateConfig) -> Any:
    from tooldisc.canary.shadow import shadow_evidence

    return shadow_evidence(engine, experiment, since, until)


def _shadow_judge(ev: Any, experiment: str, cfg: GateConfig) -> Verdict:
    from tooldisc.canary.shadow import judge_shadow

    return judge_shadow(ev, experiment, cfg)


def _interleaving_evidence(engine: Engine, experiment: str, since: datetime | None,
                           until: datetime | None, cfg: GateConfig) -> Any:
    from tooldisc.canary.interleaving import interleaving_evidence

    return interleaving_evidence(engine, experiment, since, until)


def _interleaving_judge(ev: Any, experiment: str, cfg: GateConfig) -> Verdict:
    from tooldisc.canary.interleaving import judge_interleaving

    return judge_interleaving(ev, experiment, cfg)


def profiles() -> dict[str, Profile]:
    """Every profile, by name (built on call: nothing happens at import)."""
    from tooldisc.canary.gates import GATES
    from tooldisc.canary.interleaving import GATES as INTERLEAVING_GATE_SPECS
    from tooldisc.canary.shadow import SHADOW_GATE_SPECS, SHADOW_SCHEMA
    from tooldisc.canary.synthetic.events import SCENARIOS
    from tooldisc.canary.synthetic.interleaving import INTERLEAVING_SCENARIOS
    from tooldisc.canary.synthetic.shadow import SHADOW_SCENARIOS

    return {
        "canary": Profile("canary", EVENT_SCHEMA, _canary_evidence, _canary_judge, GATES,
                          SCENARIOS, "indexed-retrieval-v1"),
        "shadow": Profile("shadow", SHADOW_SCHEMA, _shadow_evidence, _shadow_judge, SHADOW_GATE_SPECS,
                          SHADOW_SCENARIOS, "capability-planner-v1"),
        "interleaving": Profile("interleaving", EVENT_SCHEMA, _interleaving_evidence, _interleaving_judge,
                                INTERLEAVING_GATE_SPECS, INTERLEAVING_SCENARIOS, "ranking-v2"),
    }


def profile_rule() -> Options:
    """``--profile``'s constraint in the parameter rulebook: one of the registered profiles."""
    return Options(tuple(profiles()))


def profile(name: str) -> Profile:
    from tooldisc.errors import UsageError

    checked(profile_rule(), name, "--profile", UsageError)
    return profiles()[name]


def gate_fix(profile: Any, gate: str) -> str:
    """What to do about ``gate`` of ``profile`` when waiting cannot help: the gate's own record says it (its
    ``fix``), else the generic advice. The verdict pages read it here, so no report lists gates by hand."""
    found = profiles().get(str(profile))
    spec = next((g for g in found.gates if g.name == gate), None) if found is not None else None
    return spec.fix if spec is not None and spec.fix else fix_reported(gate)
