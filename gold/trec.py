"""TREC interchange: qrels (primary = 2, acceptable = 1) and runs with strictly decreasing scores.

Exporting to TREC lets trec_eval (or pytrec_eval) re-check tooldisc's numbers; writing
ranks as strictly decreasing scores keeps trec_eval's own tie-breaking from
reordering a run that tooldisc already ordered by score desc, then name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from tooldisc.gold.model import GoldSet

from tooldisc.errors import DataError

if TYPE_CHECKING:
    from tooldisc.metrics.judgment import Judgment

PRIMARY, ACCEPTABLE = 2, 1


def _token(value: str, what: str, source: str | None) -> str:
    if not value or any(ch.isspace() for ch in value):
        raise DataError(f"{what} {value!r} cannot be written to a TREC file (empty or holds whitespace)",
                        file=source)
    return value


def qrels_dict(gold: GoldSet) -> dict[str, dict[str, int]]:
    """``{qid: {tool: grade}}`` as pytrec_eval takes it; primary wins over acceptable."""
    return {q.id: {**dict.fromkeys(q.acceptable_tools, ACCEPTABLE), **dict.fromkeys(q.primary_expected_tools, PRIMARY)}
            for q in gold.queries}


def qrels_text(gold: GoldSet) -> str:
    """``qid 0 tool grade`` lines, queries in file order, primary tools first, each sorted."""
    lines = []
    for q in gold.queries:
        _token(q.id, "query id", gold.source)
        primary = sorted(set(q.primary_expected_tools))
        acceptable = sorted(set(q.acceptable_tools) - set(primary))
        for tool, grade in [*((t, PRIMARY) for t in primary), *((t, ACCEPTABLE) for t in acceptable)]:
            lines.append(f"{q.id} 0 {_token(tool, 'tool name', gold.source)} {grade}\n")
    return "".join(lines)


def write_qrels(gold: GoldSet, path: str | Path) -> None:
    Path(path).write_text(qrels_text(gold), encoding="utf-8")


def read_qrels(path: str | Path) -> dict[str, Judgment]:
    """Qrels → judgments: grade >= 2 primary, 1 acceptable, <= 0 judged not relevant.

    A query with no primary tool is a no-match query; intent is read (qrels carry none).
    """
    from tooldisc.metrics.judgment import Judgment

    source = str(path)
    grades: dict[str, dict[str, int]] = {}
    for lineno, line in enumerate(_read(path).splitlines(), 1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 4:
            raise DataError(f"a qrels line needs 4 fields (qid iter tool grade); got {len(parts)}",
                            file=source, where=f"line {lineno}")
        qid, _, tool, grade = parts
        try:
            g = int(grade)
        except ValueError:
            raise DataError(f"grade must be an integer; got {grade!r}", file=source, where=f"line {lineno}") from None
        grades.setdefault(qid, {})[tool] = g
    out: dict[str, Judgment] = {}
    for qid, tools in grades.items():
        primary = frozenset(t for t, g in tools.items() if g >= PRIMARY)
        acceptable = frozenset(t for t, g in tools.items() if g == ACCEPTABLE)
        out[qid] = Judgment(qid, primary, acceptable, no_match=not primary)
    return out


def run_dict(run: Mapping[str, Sequence[str]]) -> dict[str, dict[str, float]]:
    """``{qid: {tool: score}}`` for pytrec_eval, scores strictly decreasing with rank."""
    return {qid: {t: float(len(r) - i) for i, t in enumerate(r)} for qid, r in run.items()}


def run_text(run: Mapping[str, Sequence[str]], tag: str = "tooldisc") -> str:
    """``qid Q0 tool rank score tag`` lines; score = length − rank + 1, strictly decreasing."""
    _token(tag, "run tag", None)
    lines = []
    for qid, ranking in run.items():
        _token(qid, "query id", None)
        n = len(ranking)
        for i, tool in enumerate(ranking):
            lines.append(f"{qid} Q0 {_token(tool, 'tool name', None)} {i + 1} {n - i} {tag}\n")
    return "".join(lines)


def write_run(run: Mapping[str, Sequence[str]], path: str | Path, tag: str = "tooldisc") -> None:
    Path(path).write_text(run_text(run, tag), encoding="utf-8")


def read_run(path: str | Path) -> dict[str, tuple[str, ...]]:
    """A TREC run → ``{qid: ranked tools}``, ordered by score desc, then tool name."""
    source = str(path)
    scored: dict[str, dict[str, float]] = {}
    for lineno, line in enumerate(_read(path).splitlines(), 1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 6:
            raise DataError(f"a run line needs 6 fields (qid Q0 tool rank score tag); got {len(parts)}",
                            file=source, where=f"line {lineno}")
        qid, _, tool, _, score, _ = parts
        try:
            value = float(score)
        except ValueError:
            raise DataError(f"score must be a number; got {score!r}", file=source, where=f"line {lineno}") from None
        if tool in scored.setdefault(qid, {}):
            raise DataError(f"tool {tool!r} appears twice for query {qid!r}", file=source, where=f"line {lineno}")
        scored[qid][tool] = value
    return {qid: tuple(sorted(s, key=lambda t: (-s[t], t))) for qid, s in scored.items()}


def _read(path: str | Path) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise DataError(f"cannot read: {exc.strerror or exc}", file=str(path)) from None
    except UnicodeDecodeError as exc:
        raise DataError(f"not UTF-8 text (byte {exc.start})", file=str(path)) from None
