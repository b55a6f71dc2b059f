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


def _tracked(obj: object) -> bool:
    """Whether ``obj`` is in one of the collector's generations (``gc.get_objects`` leaves out the frozen)."""
    return any(o is obj for o in gc.get_objects())


def test_objects_someone_else_froze_stay_frozen() -> None:
    """By identity, not by the freeze count: a frozen object freed meanwhile leaves the count (a flake)."""
    sentinel: list[list[int]] = [[]]
    gc.collect()
    gc.freeze()
    try:
        assert not _tracked(sentinel)
        with gc_paused():
            young = [[] for _ in range(1000)]
        assert not _tracked(sentinel)  # no unfreeze: a pre-fork server's freeze is kept
        assert _tracked(young)  # and nothing of the pause's was frozen for good
    finally:
        gc.unfreeze()
