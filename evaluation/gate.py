"""Quality gates for CI: thresholds on eval measures, checked, and reported as JUnit.

A threshold is ``MEASURE=VALUE`` given as a minimum or a maximum (``--min
hit@15=0.95``, ``--max forbidden@15=0``). Thresholds are parsed up front, so an
unknown measure or an unparsable number is bad input (exit 2) before any work is
done; a measure that could not be measured (NaN: no queries in its domain) fails
its check — a gate fails closed.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tooldisc.errors import UsageError

if TYPE_CHECKING:
    from tooldisc.metrics.measures import Measure

# Metrics are stored rounded to 6 digits; a threshold equal to the value must pass.
_TOLERANCE = 1e-9
_THRESHOLD_RE = re.compile(r"\s*([^=<>\s]+)\s*=\s*(\S+)\s*\Z")


@dataclass(frozen=True)
class Threshold:
    """``measure`` must be at least (``bound == "min"``) or at most (``"max"``) ``value``."""

    measure: Measure
    bound: str
    value: float

    def __str__(self) -> str:
        return f"{self.measure} {'>=' if self.bound == 'min' else '<='} {self.value:g}"


@dataclass(frozen=True)
class Check:
    """One threshold against the measured value (``None`` when nothing could be measured)."""

    threshold: Threshold
    actual: float | None
    passed: bool

    @property
    def reason(self) -> str:
        t = self.threshold
        if self.actual is None:
            return f"{t.measure} could not be measured (no queries in its domain)"
        rel = ">=" if self.actual >= t.value else "<"
        if t.bound == "max":
            rel = "<=" if self.actual <= t.value else ">"
        return f"{t.measure} = {self.actual:.6g} {rel} {t.value:g}"

    def to_dict(self) -> dict[str, Any]:
        t = self.threshold
        return {"measure": str(t.measure), "bound": t.bound, "threshold": t.value, "actual": self.actual,
                "passed": self.passed, "reason": self.reason}


def parse_threshold(text: str, bound: str) -> Threshold:
    """``"hit@15=0.95"`` → a :class:`Threshold`; a bad measure or number is a UsageError."""
    from tooldisc.metrics.measures import parse_measure

    if bound not in ("min", "max"):
        raise UsageError(f"a threshold bound must be 'min' or 'max'; got {bound!r}")
    m = _THRESHOLD_RE.match(text or "")
    if m is None:
        raise UsageError(f"--{bound} expects MEASURE=VALUE, as in --{bound} hit@15=0.95; got {text!r}")
    measure = parse_measure(m.group(1))
    try:
        value = float(m.group(2))
    except ValueError:
        raise UsageError(f"--{bound} {text!r}: threshold {m.group(2)!r} is not a number") from None
    if not math.isfinite(value):
        raise UsageError(f"--{bound} {text!r}: threshold must be a finite number")
    if measure.RATE and not 0.0 <= value <= 1.0:
        raise UsageError(f"--{bound} {text!r}: {measure} is a rate in [0, 1]; got {value:g}")
    return Threshold(measure, bound, value)


def parse_thresholds(mins: Iterable[str] = (), maxs: Iterable[str] = ()) -> tuple[Threshold, ...]:
    out = [parse_threshold(t, "min") for t in mins] + [parse_threshold(t, "max") for t in maxs]
    if not out:
        raise UsageError("gate needs at least one threshold: --min MEASURE=VALUE or --max MEASURE=VALUE")
    return tuple(out)


def check(thresholds: Sequence[Threshold], metrics: Mapping[str, float | None], *,
          source: str | None = None) -> list[Check]:
    """Each threshold against ``metrics`` (measure name → value, as in an eval document).

    Names are matched as measures (``ndcg@10`` finds ``nDCG@10``); a measure the
    metrics lack is bad input, naming what they do have.
    """
    from tooldisc.metrics.measures import parse_measure

    table: dict[Measure, float | None] = {}
    for name, value in metrics.items():
        try:
            table[parse_measure(name)] = value
        except UsageError:
            continue
    out = []
    for t in thresholds:
        if t.measure not in table:
            have = ", ".join(str(m) for m in table) or "none"
            raise UsageError(f"no measure {t.measure} in the eval results (they have: {have})", file=source)
        actual = table[t.measure]
        if actual is None or (isinstance(actual, float) and math.isnan(actual)):
            out.append(Check(t, None, False))
            continue
        actual = float(actual)
        ok = actual >= t.value - _TOLERANCE if t.bound == "min" else actual <= t.value + _TOLERANCE
        out.append(Check(t, actual, ok))
    return out


def junit_xml(checks: Sequence[Check], *, name: str = "tooldisc gate") -> str:
    """A JUnit XML report (one test case per threshold) that CI systems display natively."""
    from xml.etree import ElementTree as ET

    failures = sum(1 for c in checks if not c.passed)
    suite = ET.Element("testsuite", {"name": name, "tests": str(len(checks)), "failures": str(failures),
                                     "errors": "0", "skipped": "0"})
    for c in checks:
        case = ET.SubElement(suite, "testcase", {"classname": "tooldisc.gate", "name": str(c.threshold)})
        if not c.passed:
            fail = ET.SubElement(case, "failure", {"message": c.reason, "type": "threshold"})
            fail.text = c.reason
    suites = ET.Element("testsuites", {"name": name, "tests": str(len(checks)), "failures": str(failures)})
    suites.append(suite)
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def gate_document(checks: Sequence[Check], *, source: str | None = None) -> dict[str, Any]:
    return {
        "passed": all(c.passed for c in checks),
        "checks": [c.to_dict() for c in checks],
        "source": source,
    }
