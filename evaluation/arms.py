"""What one arm of ``tooldisc compare A B [C …]`` names: a config, a config with a learned file, or a run file.

The syntax (README, "Comparing several runs"):

- ``default`` — the shipped ranker config; ``configs/bm25.yaml`` — a config file;
- ``default+learned.json`` or ``configs/bm25.yaml+learned.json`` — a config with a
  learned file; a learned file alone (recognised by its ``"format":
  "tooldisc-learned"``) is the shipped config with it;
- a TREC run file (recognised by its first line: ``qid Q0 tool rank score tag``, or
  given with ``--run``) — any retriever's offers, scored with the same gold set and K;
- ``NAME=`` before any of these labels the arm; otherwise the label is the file's
  stem (``bm25``; ``default+learned``), made unique with ``-2``, ``-3``.

A whole argument that names an existing file is always that file, so a path holding
``=`` or ``+`` needs no quoting rules. Parsing reads at most the first 64 KiB of a file
(to tell its kind); loading is left to the usual loaders.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from tooldisc.errors import UsageError

DEFAULT = "default"
_SNIFF_BYTES = 64 * 1024
_LEARNED = re.compile(r'"format"\s*:\s*"tooldisc-learned"')


@dataclass(frozen=True)
class ArmSpec:
    """One arm: its label and either a ``config`` (``"default"`` or a path, maybe with ``learned``) or a ``run``."""

    name: str
    config: str | None = None
    learned: str | None = None
    run: str | None = None
    named: bool = False  # the label was given (NAME=), so it must not be renamed

    @property
    def is_run(self) -> bool:
        return self.run is not None


def _head(path: Path) -> str:
    try:
        with path.open("rb") as fh:
            return fh.read(_SNIFF_BYTES).decode("utf-8", "replace")
    except OSError as exc:
        raise UsageError(f"arm {str(path)!r}: cannot read: {exc.strerror or exc}") from None


def _looks_like_run(head: str) -> bool:
    """The first non-blank line is a TREC run line: six fields, an integer rank and a numeric score."""
    for line in head.splitlines():
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 6:
            return False
        try:
            int(parts[3])
            float(parts[4])
        except ValueError:
            return False
        return True
    return False


def _split_label(text: str) -> tuple[str | None, str]:
    if Path(text).is_file() or "=" not in text:
        return None, text
    name, _, rest = text.partition("=")
    if not name.strip() or not rest:
        raise UsageError(f"arm {text!r}: write NAME=ARM with a non-empty name and arm")
    return name.strip(), rest


def parse_arm(text: str) -> ArmSpec:
    """A positional arm of ``compare`` (see the module docstring)."""
    name, rest = _split_label(text)
    if rest == DEFAULT:
        return ArmSpec(name or DEFAULT, config=DEFAULT, named=name is not None)
    path = Path(rest)
    if path.is_file():
        head = _head(path)
        if _LEARNED.search(head):
            return ArmSpec(name or path.stem, config=DEFAULT, learned=rest, named=name is not None)
        if _looks_like_run(head):
            return ArmSpec(name or path.stem, run=rest, named=name is not None)
        return ArmSpec(name or path.stem, config=rest, named=name is not None)
    if "+" in rest:
        config, _, learned = rest.rpartition("+")
        if config != DEFAULT and not Path(config).is_file():
            raise UsageError(f"arm {text!r}: no config {config!r} (a file, or 'default' for the shipped config)")
        if not Path(learned).is_file():
            raise UsageError(f"arm {text!r}: no learned file {learned!r}")
        label = f"{DEFAULT if config == DEFAULT else Path(config).stem}+{Path(learned).stem}"
        return ArmSpec(name or label, config=config, learned=learned, named=name is not None)
    raise UsageError(f"arm {text!r}: no such file; an arm is 'default', a config file, CONFIG+LEARNED.json, "
                     "a learned file or a TREC run file, optionally as NAME=ARM")


def parse_run_option(text: str) -> ArmSpec:
    """``--run [NAME=]run.trec``: a run file, whatever its first line says."""
    name, rest = _split_label(text)
    if not Path(rest).is_file():
        raise UsageError(f"--run {text!r}: no such file")
    return ArmSpec(name or Path(rest).stem, run=rest, named=name is not None)


def with_learned(specs: Sequence[ArmSpec], *, every: str | None = None, first: str | None = None,
                 second: str | None = None) -> tuple[ArmSpec, ...]:
    """Apply ``--learned`` (every config arm without its own), ``--learned-a`` / ``--learned-b`` (arms 1 and 2).

    An arm's own ``CONFIG+LEARNED`` wins; ``--learned-a/-b`` win over ``--learned``.
    They name a learned file for a config arm, so given for a run arm they are a usage error.
    """
    out = []
    for i, spec in enumerate(specs):
        own = (first, second)[i] if i < 2 else None
        if own is not None and spec.is_run:
            raise UsageError(f"--learned-{'ab'[i]} is for a config arm; arm {i + 1} ({spec.name}) is a run file")
        extra = own or (every if not spec.is_run else None)
        if extra is not None and spec.learned is None:
            label = spec.name if spec.named else f"{spec.name}+{Path(extra).stem}"
            spec = replace(spec, learned=extra, name=label)
        out.append(spec)
    return tuple(out)


def unique_labels(specs: Sequence[ArmSpec]) -> tuple[ArmSpec, ...]:
    """Labels told apart: a derived label seen before gets ``-2``, ``-3``…; a given one twice is an error."""
    seen: dict[str, int] = {}
    out = []
    for spec in specs:
        name = spec.name
        if name in seen:
            if spec.named:
                raise UsageError(f"arm name {name!r} is given twice; arms must be told apart")
            n = seen[name] + 1
            while f"{name}-{n}" in seen:
                n += 1
            seen[name] = n
            name = f"{name}-{n}"
        seen.setdefault(name, 1)
        out.append(replace(spec, name=name))
    return tuple(out)
