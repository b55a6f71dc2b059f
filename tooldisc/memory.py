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
            _age_survivors()
            gc.enable()


def _age_survivors() -> None:
    """Move every object the collector tracks into its oldest generation, without a pass over them.

    What a pause built (a 100,000-tool catalog is millions of objects) is still in the youngest
    generation when the collector resumes: its next young collection, then the middle one, would each
    walk all of it (a second or more at 100,000 tools) only to promote it. ``gc.freeze`` then
    ``gc.unfreeze`` puts every tracked object in the oldest generation in constant time; nothing is
    kept alive that would otherwise be freed, and full collections still examine it. Skipped when
    something else froze objects (a pre-fork server's ``gc.freeze``): unfreezing would undo that."""
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()
