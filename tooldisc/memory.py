"""The garbage collector paused around bulk work: one helper for the loader (which must not import numpy)
and the index builds alike."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while records or an index are built.

    Loads and builds allocate hundreds of thousands of short-lived lists and dicts and no cycles;
    each allocation burst would otherwise trigger collections that walk every live tool record
    (20× slower per-tool loops at 100k tools). Re-entrant.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
