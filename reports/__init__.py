"""Reports for people and machines: ``render(document, kind, format)`` is the one entry."""

from tooldisc.reports.render import FORMATS, KINDS, render

__all__ = ["FORMATS", "KINDS", "render"]
