"""The collector paused around bulk work (tooldisc.memory): re-entrant, and what it built joins the oldest
generation when it resumes, unless something else froze objects."""

from __future__ import annotations

import gc

from tooldisc.memory import gc_paused


def test_the_pause_is_reentrant_and_restores_the_collector() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner pause leaves the outer one paused
    assert gc.isenabled()


def test_what_a_pause_built_is_old_when_the_collector_resumes() -> None:
    """Young objects would make the next young and middle collections walk all of them."""
    gc.collect()
    with gc_paused():
        built = [[i] for i in range(20_000)]
        assert gc.get_count()[0] > 10_000  # all of it young while paused
        assert not _in_generation(built[-1], 2)
    assert _in_generation(built[-1], 2) and _in_generation(built, 2)  # oldest, still collectable
    assert gc.get_freeze_count() == 0


def _in_generation(obj: object, generation: int) -> bool:
    return any(o is obj for o in gc.get_objects(generation=generation))


def test_objects_someone_else_froze_stay_frozen() -> None:
    gc.collect()
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert frozen > 0
        with gc_paused():
            young = [[] for _ in range(1000)]
        assert gc.get_freeze_count() == frozen and young  # no unfreeze: a pre-fork server's freeze is kept
    finally:
        gc.unfreeze()
