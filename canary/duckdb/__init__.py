"""The DuckDB engine: telemetry files read, typed, validated and aggregated in DuckDB SQL.

:mod:`.engine` implements :class:`tooldisc.canary.engine.Engine`; :mod:`.ingest` finds,
reads, quarantines and stores telemetry files; :mod:`.simulate` checks an assignment
offline (``canary simulate``) with the hashing done in SQL.
"""
