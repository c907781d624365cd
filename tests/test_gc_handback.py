"""The memory hand-back between files: what its collection leaves alive is frozen for the rest
of the run (the next collection does not walk it again), and the run undoes that when it ends."""

from __future__ import annotations

import gc
import shutil
from pathlib import Path

from ddplint import runner
from ddplint.api import lint_paths

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _tracked_objects(count: int) -> list[list[int]]:
    return [[index] for index in range(count)]  # lists are tracked by the collector


def test_a_hand_back_in_a_run_freezes_what_survives(monkeypatch):
    monkeypatch.setattr(runner, "TRIM_AFTER_GROWTH", -1)  # hand back after every file
    before = gc.get_freeze_count()
    with runner._fewer_collections():
        frozen = gc.get_freeze_count()
        kept = _tracked_objects(5_000)
        runner._return_freed_memory()
        assert gc.get_freeze_count() >= frozen + len(kept)
    assert gc.get_freeze_count() == before


def test_a_hand_back_outside_a_run_freezes_nothing(monkeypatch):
    monkeypatch.setattr(runner, "TRIM_AFTER_GROWTH", -1)
    kept = _tracked_objects(5_000)
    before = gc.get_freeze_count()
    runner._return_freed_memory()
    assert gc.get_freeze_count() == before
    assert len(kept) == 5_000


def test_a_callers_frozen_heap_is_left_as_it_is(monkeypatch):
    """A caller that froze its own heap (an embedding tool) keeps exactly that frozen: the run
    does not freeze more of it, since it would not unfreeze it."""
    monkeypatch.setattr(runner, "TRIM_AFTER_GROWTH", -1)
    gc.freeze()
    try:
        before = gc.get_freeze_count()
        with runner._fewer_collections():
            kept = _tracked_objects(5_000)
            runner._return_freed_memory()
            assert gc.get_freeze_count() == before
        assert gc.get_freeze_count() == before and len(kept) == 5_000
    finally:
        gc.unfreeze()


def test_findings_and_the_collector_are_the_same_with_a_hand_back_after_every_file(tmp_path, monkeypatch):
    project = tmp_path / "examples"
    shutil.copytree(EXAMPLES, project)
    usual = [d.sort_key for d in lint_paths([str(project)], jobs=1)]
    before = (gc.get_threshold(), gc.get_freeze_count())
    monkeypatch.setattr(runner, "TRIM_AFTER_GROWTH", -1)
    handed_back = [d.sort_key for d in lint_paths([str(project)], jobs=1)]
    assert handed_back == usual and usual
    assert (gc.get_threshold(), gc.get_freeze_count()) == before
