"""Every error tooldisc raises on purpose.

Bad input must reach the user as one line naming the file, the place and the rule,
never as a traceback, so every loader raises one of these and the CLI renders them.
The concrete classes also subclass ``ValueError`` so callers' ``except`` clauses keep
working (the scikit-learn convention).
"""

from __future__ import annotations

from tooldisc.terminal import clip, escape

# One error line on stderr, "error: " and the file name included (issue 10 item 7).
MAX_ERROR_LINE = 300
ERROR_PREFIX = "error: "
_MAX_FILE_BYTES = 120  # a long path keeps its tail (the file name), so the message still fits
_MAX_WHERE_BYTES = 80
_MAX_MESSAGE_CHARS = 2000  # cut before collapsing whitespace: a 2 GB message costs nothing


class ToolDiscError(Exception):
    """Base of every deliberate tooldisc error."""

    exit_code = 2

    def __init__(self, message: str, *, file: str | None = None, where: str | None = None):
        self.message = message
        self.file = file
        self.where = where
        super().__init__(self.one_line())

    def one_line(self, max_bytes: int = MAX_ERROR_LINE - len(ERROR_PREFIX)) -> str:
        """``file: place: message`` on one line of at most ``max_bytes`` UTF-8 bytes.

        Every part is escaped (a file name or a value quoted in the message may hold
        ANSI or bidi codes) and whitespace runs collapse to one space; a long file
        name keeps its tail and a long message ends in an ellipsis.
        """
        parts = []
        if self.file:
            parts.append(_clip_head(escape(self.file), _MAX_FILE_BYTES))
        if self.where:
            parts.append(clip(escape(self.where), _MAX_WHERE_BYTES))
        text = escape(" ".join(str(self.message)[:_MAX_MESSAGE_CHARS].split()))
        return clip(": ".join([*parts, text]), max_bytes)


def error_line(exc: ToolDiscError) -> str:
    """The stderr line for ``exc``: ``error: `` and :meth:`ToolDiscError.one_line`, ≤ 300 bytes."""
    return ERROR_PREFIX + exc.one_line(MAX_ERROR_LINE - len(ERROR_PREFIX))


def _clip_head(text: str, max_bytes: int) -> str:
    """``text`` cut from the front ("…/dir/file.yaml") to at most ``max_bytes`` bytes."""
    raw = text.encode("utf-8")
    if len(raw) <= max_bytes:
        return text
    return "…" + raw[len(raw) - (max_bytes - 3):].decode("utf-8", "ignore")


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
