"""Evaluation: run discovery over a gold set, sweep K, compare configs, gate in CI.

Re-exports only; importing this package stays cheap (numpy and scipy load inside the
functions that need them).
"""

from tooldisc.evaluation.compare import compare_document
from tooldisc.evaluation.gate import (
    Check,
    Threshold,
    check,
    junit_xml,
    parse_threshold,
    parse_thresholds,
)
from tooldisc.evaluation.run import (
    QueryRun,
    RunResult,
    Scores,
    eval_measures,
    run_discovery,
    score_run,
)
from tooldisc.evaluation.significance import PairedTest, holm, paired_test, randomization_p, ttest_p
from tooldisc.evaluation.summary import eval_document
from tooldisc.evaluation.sweep import parse_ks, sweep_document

__all__ = [
    "Check",
    "PairedTest",
    "QueryRun",
    "RunResult",
    "Scores",
    "Threshold",
    "check",
    "compare_document",
    "eval_document",
    "eval_measures",
    "holm",
    "junit_xml",
    "paired_test",
    "parse_ks",
    "parse_threshold",
    "parse_thresholds",
    "randomization_p",
    "run_discovery",
    "score_run",
    "sweep_document",
    "ttest_p",
]
