"""The Spark engine (``--engine spark``): the DuckDB engine's verdicts, computed where the data is.

:mod:`.engine` implements :class:`tooldisc.canary.engine.Engine`; :mod:`.session` opens
the session (local, a master URL, Spark Connect); :mod:`.read` resolves what Spark reads;
:mod:`.simulate` is ``canary simulate`` on Spark.
"""
