"""Quality gates for CI: thresholds on eval measures, checked, and reported as JUnit.

A threshold is ``MEASURE=VALUE`` given as a minimum or a maximum (``--min
hit@15=0.95``, ``--max forbidden@15=0``), or as the largest allowed drop from a
baseline eval (``--max-drop MRR=0.01`` with ``--baseline BASE.json``): a drop is a
move in the worse direction — down for quality measures, up for risks and costs
(``forbidden``, ``false_abstention``, ``avg_k``, latency) — so a max-drop becomes a
minimum (or maximum) of the baseline's value minus (plus) the drop, and is checked,
reported and written to JUnit like any other threshold.

A baseline is the normal case of another ranker config on the same gold set,
catalog and K; another gold set, catalog or K is bad input, since the numbers would
not measure the same thing. Thresholds are parsed up front, so an unknown measure or
an unparsable number is bad input (exit 2) before any work is done; a measure that
could not be measured (NaN: no queries in its domain), here or in the baseline,
fails its check — a gate fails closed.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tooldisc.errors import DataError, UsageError

if TYPE_CHECKING:
    from tooldisc.evaluation.inputs import RunInputs
    from tooldisc.evaluation.run import RunResult
    from tooldisc.metrics.measures import Measure

# Metrics are stored rounded to 6 digits; a threshold equal to the value must pass.
_TOLERANCE = 1e-9
_THRESHOLD_RE = re.compile(r"\s*([^=<>\s]+)\s*=\s*(\S+)\s*\Z")


@dataclass(frozen=True)
class Threshold:
    """``measure`` must be at least (``bound == "min"``) or at most (``"max"``) ``value``.

    A threshold from ``--max-drop`` also carries the ``baseline`` value and the
    ``max_drop`` it was derived from; ``value`` is NaN when the baseline had no value.
    """

    measure: Measure
    bound: str
    value: float
    baseline: float | None = None
    max_drop: float | None = None

    def __str__(self) -> str:
        rel = ">=" if self.bound == "min" else "<="
        if self.max_drop is None:
            return f"{self.measure} {rel} {self.value:g}"
        if self.baseline is None:
            return f"{self.measure} drop <= {self.max_drop:g} from a baseline that did not measure it"
        return f"{self.measure} {rel} {self.value:.6g} ({self.origin})"

    @property
    def origin(self) -> str:
        """``baseline 0.8722 - max drop 0.01``: where a relative threshold came from ("" if absolute)."""
        if self.max_drop is None or self.baseline is None:
            return ""
        return f"baseline {self.baseline:.6g} {'-' if self.bound == 'min' else '+'} max drop {self.max_drop:g}"


@dataclass(frozen=True)
class MaxDrop:
    """``--max-drop MEASURE=DROP``: how far ``measure`` may move the worse way from a baseline."""

    measure: Measure
    drop: float


@dataclass(frozen=True)
class Check:
    """One threshold against the measured value (``None`` when nothing could be measured)."""

    threshold: Threshold
    actual: float | None
    passed: bool

    @property
    def reason(self) -> str:
        t = self.threshold
        if t.max_drop is not None and t.baseline is None:
            return f"{t.measure} was not measured in the baseline (no queries in its domain)"
        if self.actual is None:
            return f"{t.measure} could not be measured (no queries in its domain)"
        rel = ">=" if self.actual >= t.value else "<"
        if t.bound == "max":
            rel = "<=" if self.actual <= t.value else ">"
        origin = f" ({t.origin})" if t.origin else ""
        return f"{t.measure} = {self.actual:.6g} {rel} {t.value:.6g}{origin}"

    def to_dict(self) -> dict[str, Any]:
        t = self.threshold
        return {"measure": str(t.measure), "bound": t.bound,
                "threshold": None if math.isnan(t.value) else t.value, "actual": self.actual,
                "passed": self.passed, "reason": self.reason, "baseline": t.baseline, "max_drop": t.max_drop}


def _measure_equals_number(text: str, flag: str, shape: str, example: str) -> tuple[Measure, float]:
    """``"MEASURE=NUMBER"`` as given to ``flag``, the number finite; anything else is a UsageError."""
    from tooldisc.metrics.measures import parse_measure

    m = _THRESHOLD_RE.match(text or "")
    if m is None:
        raise UsageError(f"{flag} expects {shape}, as in {flag} {example}; got {text!r}")
    measure = parse_measure(m.group(1))
    try:
        value = float(m.group(2))
    except ValueError:
        raise UsageError(f"{flag} {text!r}: {m.group(2)!r} is not a number") from None
    if not math.isfinite(value):
        raise UsageError(f"{flag} {text!r}: {m.group(2)!r} must be a finite number")
    return measure, value


def parse_threshold(text: str, bound: str) -> Threshold:
    """``"hit@15=0.95"`` → a :class:`Threshold`; a bad measure or number is a UsageError."""
    if bound not in ("min", "max"):
        raise UsageError(f"a threshold bound must be 'min' or 'max'; got {bound!r}")
    measure, value = _measure_equals_number(text, f"--{bound}", "MEASURE=VALUE", "hit@15=0.95")
    if measure.RATE and not 0.0 <= value <= 1.0:
        raise UsageError(f"--{bound} {text!r}: {measure} is a rate in [0, 1]; got {value:g}")
    return Threshold(measure, bound, value)


def parse_thresholds(mins: Iterable[str] = (), maxs: Iterable[str] = (), *,
                     required: bool = True) -> tuple[Threshold, ...]:
    """Every ``--min`` and ``--max``; with ``required`` at least one must be given."""
    out = [parse_threshold(t, "min") for t in mins] + [parse_threshold(t, "max") for t in maxs]
    if not out and required:
        raise UsageError("gate needs at least one threshold: --min MEASURE=VALUE, --max MEASURE=VALUE, "
                         "or --max-drop MEASURE=DROP with --baseline")
    return tuple(out)


def parse_max_drop(text: str) -> MaxDrop:
    """``"MRR=0.01"`` → a :class:`MaxDrop`; the drop is a finite number >= 0 (<= 1 for rates)."""
    measure, drop = _measure_equals_number(text, "--max-drop", "MEASURE=DROP", "MRR=0.01")
    if drop < 0:
        raise UsageError(f"--max-drop {text!r}: the drop must be a finite number >= 0")
    if measure.RATE and drop > 1.0:
        raise UsageError(f"--max-drop {text!r}: {measure} is a rate in [0, 1]; a drop above 1 allows anything")
    return MaxDrop(measure, drop)


def baseline_thresholds(drops: Sequence[MaxDrop], baseline: Mapping[str, float | None], *,
                        source: str | None = None) -> tuple[Threshold, ...]:
    """Each max-drop as an absolute threshold around the baseline's value of its measure."""
    table = _measure_table(baseline)
    out = []
    for d in drops:
        if d.measure not in table:
            have = ", ".join(str(m) for m in table) or "none"
            raise UsageError(f"no measure {d.measure} in the baseline (it has: {have})", file=source)
        bound = "max" if d.measure.lower_is_better else "min"
        base = table[d.measure]
        if base is None or (isinstance(base, float) and math.isnan(base)):
            out.append(Threshold(d.measure, bound, math.nan, None, d.drop))
            continue
        value = float(base) + d.drop if bound == "max" else float(base) - d.drop
        out.append(Threshold(d.measure, bound, value, float(base), d.drop))
    return tuple(out)


# What must be equal for a baseline to be comparable: (what, path in the eval document).
_IDENTITY: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("gold set", ("gold", "hash")), ("catalog", ("catalog", "hash")), ("K", ("k",)), ("K", ("cutoff",)))


def _get(doc: Mapping[str, Any], path: Sequence[str]) -> Any:
    for key in path:
        doc = doc.get(key) if isinstance(doc, Mapping) else None  # type: ignore[assignment]
    return doc


def check_baseline(baseline: Mapping[str, Any], current: Mapping[str, Any], *, source: str,
                   context: bool = True) -> list[str]:
    """Refuse a baseline measured on another gold set, catalog or K; return notes on what else differs.

    Another ranker config is the normal case and is only reported; another context
    (compared when ``context``) is worth a note.
    """
    for what, path in _IDENTITY:
        base, now = _get(baseline, path), _get(current, path)
        if base is None or now is None:
            side = "the baseline" if base is None else "the current eval results"
            raise DataError(f"{side} lack {'.'.join(path)}, which a baseline comparison needs; write both with "
                            "'tooldisc eval --format json' of this version", file=source)
        if base != now:
            shown = (str(base)[:12], str(now)[:12]) if what != "K" else (base, now)
            raise DataError(f"the baseline was measured on another {what} ({shown[0]}, now {shown[1]}); a baseline "
                            "must share the gold set, catalog and K (only the ranker config may differ)",
                            file=source)
    notes = []
    if context and _get(baseline, ("context",)) != _get(current, ("context",)):
        notes.append("the baseline was measured with another context")
    return notes


def load_eval_document(path: str) -> dict[str, Any]:
    """An eval JSON (``tooldisc eval --format json``); anything else is a one-line DataError."""
    import json

    from tooldisc.documents import loads_json, read_text

    text = read_text(path, max_bytes=64 * 1024 * 1024, what="eval results")
    try:
        data = loads_json(text, path)  # duplicate keys, NaN and deep nesting refused
    except json.JSONDecodeError as exc:
        raise DataError(f"invalid JSON: {exc.msg}", file=path, where=f"line {exc.lineno} column {exc.colno}") from None
    metrics = data.get("metrics") if isinstance(data, dict) else None
    if not isinstance(metrics, dict) or not all(
            v is None or (isinstance(v, int | float) and not isinstance(v, bool)) for v in metrics.values()):
        raise DataError("expected the output of 'tooldisc eval --format json': an object whose 'metrics' maps "
                        "measure names to numbers", file=path, where="metrics")
    return data


def _measure_table(metrics: Mapping[str, float | None]) -> dict[Measure, float | None]:
    from tooldisc.metrics.measures import parse_measure

    table: dict[Measure, float | None] = {}
    for name, value in metrics.items():
        try:
            table[parse_measure(name)] = value
        except UsageError:
            continue
    return table


def check(thresholds: Sequence[Threshold], metrics: Mapping[str, float | None], *,
          source: str | None = None) -> list[Check]:
    """Each threshold against ``metrics`` (measure name → value, as in an eval document).

    Names are matched as measures (``ndcg@10`` finds ``nDCG@10``); a measure the
    metrics lack is bad input, naming what they do have. A threshold without a value
    (a baseline that did not measure it) fails.
    """
    table = _measure_table(metrics)
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
        if math.isnan(t.value):
            out.append(Check(t, actual, False))
            continue
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


def gate_document(checks: Sequence[Check], *, source: str | None = None,
                  baseline: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The gate's JSON: verdict, one entry per check, and the baseline it was measured against."""
    doc: dict[str, Any] = {
        "passed": all(c.passed for c in checks),
        "checks": [c.to_dict() for c in checks],
        "source": source,
    }
    if baseline is not None:
        doc["baseline"] = dict(baseline)
    return doc


# --- the gate as one step: a request in, a result out -------------------------------------------------------


@dataclass(frozen=True)
class GateRequest:
    """What a gate is asked: thresholds as typed (``MEASURE=VALUE``), an optional baseline eval JSON that
    ``max_drops`` are measured from, and either a finished eval JSON (``source``) or a run.

    ``run_flags`` names the run options given (``--catalog``, ``--k``…): a finished eval cannot be combined
    with them.
    """

    mins: tuple[str, ...] = ()
    maxs: tuple[str, ...] = ()
    max_drops: tuple[str, ...] = ()
    baseline: str | None = None
    source: str | None = None
    run_flags: tuple[str, ...] = ()


@dataclass(frozen=True)
class GateResult:
    """The checks and the gate's JSON document (``document["passed"]``: every threshold holds)."""

    checks: tuple[Check, ...]
    document: dict[str, Any]

    @property
    def passed(self) -> bool:
        return bool(self.document["passed"])


def run_gate(request: GateRequest, *, load: Callable[[], tuple[RunInputs, int | str | None]],
             discover: Callable[[RunInputs, int | str | None], RunResult],
             note: Callable[[str], None] = lambda _line: None) -> GateResult:
    """Parse and check every threshold and the baseline before any work, measure (``discover`` over the
    inputs ``load`` gives, with their K) unless ``request.source`` names a finished eval, and check.

    ``load`` and ``discover`` are the caller's (the command line's show notes and a progress bar); ``note``
    receives what differs from the baseline beyond the ranker config. Bad input raises
    :class:`~tooldisc.errors.UsageError` or :class:`~tooldisc.errors.DataError`.
    """
    drops = [parse_max_drop(text) for text in request.max_drops]
    if drops and not request.baseline:
        raise UsageError("--max-drop needs --baseline BASE.json (an earlier 'tooldisc eval --format json')")
    if request.baseline and not drops:
        raise UsageError("--baseline needs at least one --max-drop MEASURE=DROP")
    thresholds = parse_thresholds(request.mins, request.maxs, required=not drops)
    base_doc = load_eval_document(request.baseline) if request.baseline else None
    relative = baseline_thresholds(drops, base_doc["metrics"], source=request.baseline) if base_doc else ()
    thresholds = (*thresholds, *relative)
    if request.source:
        if request.run_flags:
            raise UsageError(f"--from reads finished eval results; it cannot be combined with "
                             f"{', '.join(request.run_flags)}")
        current, source = load_eval_document(request.source), request.source
    else:
        from tooldisc.evaluation.summary import check_measurable, eval_document

        check_measurable([t.measure for t in thresholds])
        inputs, k = load()
        if base_doc is not None and request.baseline:  # refuse an incomparable baseline before the run, not after
            check_baseline(base_doc, run_identity(inputs, k), source=request.baseline, context=False)
        result = discover(inputs, k)
        deep = [t for t in thresholds if t.measure.cutoff is not None and t.measure.cutoff > result.cutoff]
        if deep:
            raise UsageError(f"{deep[0].measure} looks deeper than the run's offers (K={result.k}, at most "
                             f"{result.cutoff} tools); run with --k {deep[0].measure.cutoff} or more")
        current = eval_document(result, by=(), max_misses=0, extra=[t.measure for t in thresholds])
        source = None
    base_info = None
    if base_doc is not None and request.baseline:
        notes = check_baseline(base_doc, current, source=request.baseline)
        for line in notes:
            note(f"note: {line}")
        base_info = {"source": request.baseline, "config": base_doc.get("config"), "notes": notes}
    checks = check(thresholds, current["metrics"], source=source)
    return GateResult(tuple(checks), gate_document(checks, source=source, baseline=base_info))


def run_identity(inputs: RunInputs, k: int | str | None) -> dict[str, Any]:
    """The parts of an eval document a baseline must share, known before discovery runs."""
    from tooldisc.evaluation.run import cutoff_for

    kk = inputs.config.k if k is None else k
    return {"gold": {"hash": inputs.gold.hash}, "catalog": {"hash": inputs.catalog.hash}, "k": kk,
            "cutoff": cutoff_for(inputs.config, kk)}
