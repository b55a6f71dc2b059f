"""Evaluation: run discovery over a gold set, sweep K, compare configs, gate in CI.

Re-exports only; importing this package stays cheap (numpy and scipy load inside the
functions that need them, polars with the per-query table).
"""

from tooldisc.evaluation.api import EvalRun, discover_gold, evaluate, score_eval
from tooldisc.evaluation.compare import Comparison, compare, compare_document
from tooldisc.evaluation.gate import (
    Check,
    MaxDrop,
    Threshold,
    baseline_thresholds,
    check,
    check_baseline,
    junit_xml,
    parse_max_drop,
    parse_threshold,
    parse_thresholds,
)
from tooldisc.evaluation.inputs import RunInputs, default_gold_path, load_run_inputs
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
    "Comparison",
    "EvalRun",
    "MaxDrop",
    "PairedTest",
    "QueryRun",
    "RunInputs",
    "RunResult",
    "Scores",
    "Threshold",
    "baseline_thresholds",
    "check",
    "check_baseline",
    "compare",
    "compare_document",
    "default_gold_path",
    "discover_gold",
    "eval_document",
    "eval_measures",
    "evaluate",
    "holm",
    "junit_xml",
    "load_run_inputs",
    "paired_test",
    "parse_ks",
    "parse_max_drop",
    "parse_threshold",
    "parse_thresholds",
    "randomization_p",
    "run_discovery",
    "score_eval",
    "score_run",
    "sweep_document",
    "ttest_p",
]
