"""Every error tooldisc raises on purpose.

Bad input must reach the user as one line naming the file, the place and the rule,
never as a traceback, so every loader raises one of these and the CLI renders them.
The concrete classes also subclass ``ValueError`` so callers' ``except`` clauses keep
working (the scikit-learn convention).
"""

from __future__ import annotations


class ToolDiscError(Exception):
    """Base of every deliberate tooldisc error."""

    exit_code = 2

    def __init__(self, message: str, *, file: str | None = None, where: str | None = None):
        self.message = message
        self.file = file
        self.where = where
        super().__init__(self.one_line())

    def one_line(self) -> str:
        """``file: place: message`` with whatever parts are known, on one line."""
        parts = [p for p in (self.file, self.where) if p]
        text = " ".join(self.message.split())
        return ": ".join([*parts, text]) if parts else text


class DataError(ToolDiscError, ValueError):
    """A data file (catalog, gold set, telemetry, plan) is malformed."""


class ConfigError(ToolDiscError, ValueError):
    """A configuration (ranker weights, gates, context file) is malformed."""


class UsageError(ToolDiscError, ValueError):
    """Options that cannot be used together, or a value outside its domain."""


class MissingExtraError(ToolDiscError, ImportError):
    """An optional feature was asked for but its extra is not installed."""

    def __init__(self, feature: str, extra: str, package: str):
        super().__init__(
            f"{feature} needs the optional package {package!r}; "
            f"install it with: pip install 'tooldisc[{extra}]'"
        )
