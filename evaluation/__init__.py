"""Evaluation: run discovery over a gold set, sweep K, compare configs, gate in CI."""
