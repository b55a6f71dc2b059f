"""The collector paused around bulk work (tooldisc.memory): re-entrant, and what it built joins the oldest
generation when it resumes, unless something else froze objects."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Callable

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


# --------------------------------------------------------------------------- parses

def _big_json() -> str:
    import json

    return json.dumps({"tools": [{"name": f"t{i}", "tags": [str(i), "x"], "schema": {"type": "object"}}
                                 for i in range(4000)]})


def _passes_during(parse: Callable[[], object]) -> tuple[int, bool]:
    """The collector passes that ``parse()`` started (a refused document's included), and whether the
    collector was on after it."""
    from tooldisc.errors import DataError

    passes: list[int] = []

    def note(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            passes.append(info["generation"])

    gc.collect()
    gc.callbacks.append(note)
    try:
        with contextlib.suppress(DataError):
            parse()
    finally:
        gc.callbacks.remove(note)
    return len(passes), gc.isenabled()


def test_a_large_document_is_parsed_with_no_collector_pass() -> None:
    """A parse makes objects and no cycles: passes over the growing heap were half of a 10k-tool YAML parse."""
    import yaml

    from tooldisc.documents import BULK_CHARS, loads_json, parse_document, parse_jsonl, parse_yaml
    from tooldisc.gold.loader import parse_gold

    text = _big_json()
    lines = "\n".join(f'{{"id": "q{i}", "query": "find invoice {i}", "intended_tools": ["t{i}"]}}' for i in range(3000))
    as_yaml = yaml.safe_dump({"tools": [{"name": f"t{i}", "roles": ["a", "b"]} for i in range(3000)]})
    assert min(len(text), len(lines), len(as_yaml)) >= BULK_CHARS
    for parse in (lambda: loads_json(text), lambda: parse_document(text, "c.json"), lambda: parse_yaml(as_yaml, "c.yaml"),
                  lambda: parse_jsonl(lines, "q.jsonl"), lambda: parse_gold(lines, source="q.jsonl")):
        assert _passes_during(parse) == (0, True)
    # The control: the same parse with the collector left on starts passes (the test can fail).
    from tooldisc.documents import _decode

    assert _passes_during(lambda: _decode(text))[0] > 0


def test_a_refused_large_document_leaves_the_collector_on() -> None:
    from tooldisc.documents import parse_yaml

    bad = "tools:\n" + "".join(f"  - name: t{i}\n    name: again\n" for i in range(5000))
    assert _passes_during(lambda: parse_yaml(bad, "c.yaml"))[1]
    assert gc.isenabled()


def test_a_small_document_is_parsed_with_the_collector_on() -> None:
    """Each pause moves what lives into the oldest generation: small parses (contexts, configs) keep the
    collector's own rhythm."""
    from tooldisc import documents

    seen: list[bool] = []
    real = documents._decode

    def spy(text: str) -> object:
        seen.append(gc.isenabled())
        return real(text)

    documents._decode = spy  # type: ignore[assignment]
    try:
        documents.loads_json('{"a": 1}')
        documents.loads_json(_big_json())
    finally:
        documents._decode = real  # type: ignore[assignment]
    assert seen == [True, False]
