"""The parameter rulebook: every options record's constraints as data, checked in one place.

Modelled on scikit-learn's ``utils/_param_validation.py``. A record (the ranker config, the
gates file, ``LearnOptions``, ``BenchOptions``, ``WeightTuner``, the count limits) declares
what each parameter may hold as a constraint object, and :func:`validate` checks a record's
values against that table. There is one message form, scikit-learn's, so a refusal reads
the same whether it came from Python, a YAML file or a command-line option::

    The 'k' parameter must be an int in the range [1, 1000]. Got 0 instead.

and one exception mapping: a constraint reports ``TypeError`` for a wrong type and
``ValueError`` for a bad value; a caller that names an error class (``ConfigError`` at a
file boundary with the file and the key, ``UsageError`` for a command's options) gets that
class instead, so today's ``except`` clauses keep working. Base layer: nothing here imports
a subpackage, so every layer may declare its constraints with these objects.

What this rulebook does not word: a **data contract**, a rule on the content of a record that a
file carries — a catalog's tool, a context, a learned file's parts, a gold query, a telemetry
row, and the same records built in Python (:mod:`tooldisc.values`). Those errors name the file
(or the record) and the place, then the rule and the value
(``catalog.yaml: tools[3].side_effect: side_effect must be one of none, write, …; got 'maybe'``;
``Context.mode must be one of analyzer, …; got 'Analyzer'``), because the reader has to find the
bad entry among many, and one contract reads the same whether a file or a constructor broke
it. That form is deliberate and separate; a parameter of an operation (an option, a config
key, an argument) always gets this module's form.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Protocol

from tooldisc.closed_schema import check_keys, unknown_field, without_extensions
from tooldisc.errors import ToolDiscError

Problem = tuple[type[Exception], str]
"""What a refused value gets: the builtin class (TypeError or ValueError) and the message."""


def label(name: str) -> str:
    """How a message names the parameter: ``The 'k' parameter``, or an option as typed (``--k``).

    A name that is already a label (``The 'sizes' parameter's each size``) is kept as it is.
    """
    return name if name.startswith(("-", "The ")) else f"The {name!r} parameter"


_MAX_SHOWN = 200  # characters of a refused value's repr kept in a message: the error stays one line


def shown(value: Any) -> str:
    """``repr(value)``, cut to a few hundred characters (an int too long for ``repr`` is described)."""
    try:
        text = repr(value)
    except ValueError:  # an int past Python's digit limit for str()
        return f"an int of {value.bit_length()} bits"
    return text if len(text) <= _MAX_SHOWN else text[:_MAX_SHOWN - 3] + "..."


def message(name: str, description: str, value: Any) -> str:
    """The one message form: the parameter, what is allowed, what arrived."""
    return f"{label(name)} must be {description}. Got {shown(value)} instead."


class Constraint(Protocol):
    """What every rule offers: a description of what it allows and a check of one value."""

    def describe(self) -> str: ...

    def problem(self, value: Any, name: str) -> Problem | None: ...


def refuse(found: Problem, error: type[ToolDiscError] | None = None, *, file: str | None = None,
           where: str | None = None) -> None:
    """Raise ``found``: as its builtin class, or as ``error`` (with the file and the place) when given."""
    if error is None:
        raise found[0](found[1])
    raise error(found[1], file=file, where=where)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


_BRACKETS = {"both": "[]", "left": "[)", "right": "(]", "neither": "()"}


@dataclass(frozen=True)
class Interval:
    """An int or a finite number between ``low`` and ``high`` (None: unbounded on that side).

    ``closed`` says which bounds belong to the range (``both``, ``left``, ``right``,
    ``neither``). An int-kind interval takes a float with an integral value (YAML's ``3.0``)
    unless ``strict``; a count argument is ``strict``. ``grid`` keeps a number on multiples of
    ``1 / grid`` (a basis point: 10,000). ``why`` says why the range is what it is; it is shown
    in the description when set. NaN and infinities never pass.
    """

    kind: type
    low: float | None
    high: float | None
    closed: str = "both"
    strict: bool = False
    grid: int | None = None
    why: str = ""

    def describe(self) -> str:
        lo = "-inf" if self.low is None else self._bound(self.low)
        hi = "inf" if self.high is None else self._bound(self.high)
        left, right = _BRACKETS[self.closed]
        left, right = "(" if self.low is None else left, ")" if self.high is None else right  # inf is never in
        text = "an int" if self.kind is int else "a number"
        if self.low is not None or self.high is not None:  # no range to name when both sides are open
            text += f" in the range {left}{lo}, {hi}{right}"
        if self.grid is not None:
            text += f" in steps of {1 / self.grid:g}"
        return f"{text} ({self.why})" if self.why else text

    def _bound(self, bound: float) -> str:
        """An int range's bound in full (``1000000``), a number's as ``:g`` (``1e+09``)."""
        return str(int(bound)) if self.kind is int else f"{bound:g}"

    def accepts_type(self, value: Any) -> bool:
        if self.kind is int:
            if self.strict or isinstance(value, int):
                return isinstance(value, int) and not isinstance(value, bool)
            return isinstance(value, float) and value.is_integer()
        return _is_number(value)

    def contains(self, value: Any) -> bool:
        """Whether a value of an accepted type lies in the range (and on the grid)."""
        if isinstance(value, float) and not math.isfinite(value):
            return False
        low_ok = self.low is None or (self.low <= value if self.closed in ("both", "left") else self.low < value)
        high_ok = self.high is None or (value <= self.high if self.closed in ("both", "right") else value < self.high)
        if not (low_ok and high_ok):
            return False
        return self.grid is None or abs(value * self.grid - round(value * self.grid)) < 1e-9

    def problem(self, value: Any, name: str) -> Problem | None:
        ok_type = self.accepts_type(value)
        if ok_type and self.contains(value):
            return None
        return (ValueError if ok_type else TypeError), message(name, self.describe(), value)

    def cast(self, value: Any) -> Any:
        """An accepted value in the declared kind (``3.0`` → ``3``, ``1`` → ``1.0``)."""
        return self.kind(value)

    def check(self, value: Any, name: str, file: str | None = None, error: type[ToolDiscError] | None = None) -> Any:
        """``value`` in the declared kind, or the error (a ConfigError naming the file, unless ``error``)."""
        found = self.problem(value, name)
        if found is not None:
            refuse(found, error or _config_error(), file=file, where=name)
        return self.cast(value)

    def but(self, **changes: Any) -> Interval:
        """The same range with some fields changed (a config's ``k`` is the count ``k`` without its reason)."""
        return replace(self, **changes)


@dataclass(frozen=True)
class Options:
    """Exactly one of a few names: no case folding, no spelling variant."""

    options: tuple[str, ...]

    def describe(self) -> str:
        return repr(self.options[0]) if len(self.options) == 1 else f"one of {', '.join(self.options)}"

    def problem(self, value: Any, name: str) -> Problem | None:
        if isinstance(value, str) and value in self.options:
            return None
        return (ValueError if isinstance(value, str) else TypeError), message(name, self.describe(), value)

    def check(self, value: Any, name: str, file: str | None = None, error: type[ToolDiscError] | None = None) -> str:
        found = self.problem(value, name)
        if found is not None:
            refuse(found, error or _config_error(), file=file, where=name)
        return value


@dataclass(frozen=True)
class Text:
    """A str of ``low`` to ``high`` characters (None: no upper bound): an id, a salt.

    No stripping nor folding: the value is used as given (an id is hashed byte for byte).
    """

    low: int = 1
    high: int | None = None

    def describe(self) -> str:
        kind = "a non-empty str" if self.low == 1 else "a str" if self.low == 0 else f"a str of at least {self.low} characters"
        return kind if self.high is None else f"{kind} of at most {self.high} characters"

    def problem(self, value: Any, name: str) -> Problem | None:
        if not isinstance(value, str):
            return TypeError, message(name, self.describe(), value)
        if len(value) < self.low or (self.high is not None and len(value) > self.high):
            return ValueError, message(name, self.describe(), value)
        return None


@dataclass(frozen=True)
class Flag:
    """true or false (a bool, never 0/1 nor "yes")."""

    def describe(self) -> str:
        return "true or false"

    def problem(self, value: Any, name: str) -> Problem | None:
        if isinstance(value, bool):
            return None
        return TypeError, message(name, self.describe(), value)

    def check(self, value: Any, name: str, file: str | None = None, error: type[ToolDiscError] | None = None) -> bool:
        found = self.problem(value, name)
        if found is not None:
            refuse(found, error or _config_error(), file=file, where=name)
        return value


@dataclass(frozen=True)
class Nothing:
    """``None`` itself (scikit-learn writes it as ``None`` in a constraint list): "use the default"."""

    def describe(self) -> str:
        return "None"

    def problem(self, value: Any, name: str) -> Problem | None:
        return None if value is None else (TypeError, message(name, self.describe(), value))


@dataclass(frozen=True)
class Either:
    """A value any of ``rules`` accepts (the ``k`` of a request: an int, or ``"auto"``)."""

    rules: tuple[Any, ...]

    def describe(self) -> str:
        parts = [r.describe() for r in self.rules]
        return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} or {parts[-1]}"

    def problem(self, value: Any, name: str) -> Problem | None:
        found = [r.problem(value, name) for r in self.rules]
        if any(f is None for f in found):
            return None
        kind = ValueError if any(f is not None and f[0] is ValueError for f in found) else TypeError
        return kind, message(name, self.describe(), value)


@dataclass(frozen=True)
class Items:
    """A non-empty list or tuple whose every item ``each`` accepts (the bench's sizes)."""

    each: Interval

    def describe(self) -> str:
        return f"a non-empty list, each item {self.each.describe()}"

    def problem(self, value: Any, name: str) -> Problem | None:
        if not isinstance(value, list | tuple) or not value:
            return (ValueError if isinstance(value, list | tuple) else TypeError), \
                message(name, self.describe(), value)
        for item in value:
            found = self.each.problem(item, name)
            if found is not None:
                return found[0], message(name, self.describe(), value)
        return None


@dataclass(frozen=True)
class NumberMap:
    """A mapping of known names to numbers in ``values``; a file overlays only the names it sets."""

    names: tuple[str, ...]
    values: Interval

    def describe(self) -> str:
        return "a mapping of name → number"

    def entry_problem(self, name: Any, w: Any, path: str) -> Problem | None:
        if name not in self.names:
            return ValueError, f"{path}.{name}: {unknown_field(name, self.names)}"
        return self.values.problem(w, f"{path}.{name}")

    def problem(self, value: Any, path: str) -> Problem | None:
        if not isinstance(value, Mapping):
            return TypeError, message(path, self.describe(), value)
        for name, w in value.items():
            found = self.entry_problem(name, w, path)
            if found is not None:
                return found
        return None

    def check(self, value: Any, path: str, file: str | None, base: Mapping[str, float]) -> dict[str, float]:
        """``base`` overlaid with the checked entries of ``value`` (a file's mapping; ``x-`` keys skipped)."""
        from tooldisc.errors import ConfigError

        if value is None:
            value = {}
        if not isinstance(value, Mapping):
            raise ConfigError(f"{path} must be a mapping of name → number", file=file, where=path)
        check_keys(value, self.names, where=path, file=file, error=ConfigError)
        out = dict(base)
        for name, w in without_extensions(value).items():
            out[str(name)] = float(self.values.check(w, f"{path}.{name}", file))
        return out


def checked(rule: Any, value: Any, name: str, error: type[ToolDiscError] | None = None, *,
            owner: str | None = None) -> Any:
    """``value`` if ``rule`` accepts it, else the refusal (``owner: `` before it when given, as an object's
    constructor names itself): the one-line check a function's own argument gets."""
    found = rule.problem(value, name)
    if found is not None:
        refuse((found[0], f"{owner}: {found[1]}" if owner else found[1]), error)
    return value


def _config_error() -> type[ToolDiscError]:
    from tooldisc.errors import ConfigError

    return ConfigError


def validate(constraints: Mapping[str, Constraint], values: Any, *, error: type[ToolDiscError] | None = None,
             prefix: str = "", file: str | None = None, only: Iterable[str] | None = None) -> None:
    """Check every constrained parameter of ``values`` (a mapping or an object's attributes).

    The one entry point (scikit-learn's ``validate_parameter_constraints``): the first refused
    value is raised as its builtin class, or as ``error`` with ``file`` and the key's path.
    ``only`` limits the check to the names a file actually set.
    """
    get = values.__getitem__ if isinstance(values, Mapping) else lambda n: getattr(values, n)
    for name in (constraints if only is None else only):
        path = f"{prefix}.{name}" if prefix else name
        found = constraints[name].problem(get(name), path)
        if found is not None:
            refuse(found, error, file=file, where=path if file is not None else None)
