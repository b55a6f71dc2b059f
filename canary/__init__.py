"""Canary: SHA-256 arm assignment, telemetry in DuckDB, promotion gates and verdicts."""
