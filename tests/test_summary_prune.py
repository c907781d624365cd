"""The summary store and the cache folder stay bounded: entries no recent run used are pruned once
the store holds more than MAX_SUMMARY_ENTRIES (never one the pruning run used), and the folder
an older ddplint version left behind goes once no run of that version wrote for OLD_VERSION_DAYS."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

import ddplint.cache as cache_module
from ddplint import __version__
from ddplint.api import lint_paths
from ddplint.cache import SUMMARY_FOLDER_NAME, ResultCache, SummaryFolder, write_owned_json
from ddplint.rules import select_rules
from loader_project import LOADER_MODULE, TRAINING_SCRIPT, write_project

DAY_NS = 24 * 3600 * 10**9


@pytest.fixture
def small_bound(monkeypatch):
    monkeypatch.setattr(cache_module, "MAX_SUMMARY_ENTRIES", 10)
    monkeypatch.setattr(cache_module, "PRUNED_SUMMARY_ENTRIES", 6)


def _entries(cache_dir: Path) -> set[str]:
    return {path.name for path in (cache_dir / __version__ / SUMMARY_FOLDER_NAME).glob("*.json")}


def _entry_name(store: SummaryFolder, content: bytes) -> str:
    return store._entry("outline", content)[0]


def _earlier_runs(cache_dir: Path, count: int) -> list[bytes]:
    """`count` entries saved by earlier runs, the first the longest unused (days apart)."""
    contents = [f"module {i}\n".encode() for i in range(count)]
    store = SummaryFolder.open(cache_dir)
    assert store is not None
    now = time.time_ns()
    for age, content in enumerate(reversed(contents), start=1):
        store.save("outline", content, [True, None])
        path = cache_dir / __version__ / SUMMARY_FOLDER_NAME / _entry_name(store, content)
        os.utime(path, ns=(now - age * DAY_NS, now - age * DAY_NS))
    store._folder.__exit__()  # closed without the pruning close() does: these are "earlier runs"
    return contents


def test_a_run_that_grows_the_store_past_the_bound_prunes_the_longest_unused(tmp_path, small_bound):
    cache_dir = tmp_path / "cache"
    contents = _earlier_runs(cache_dir, 12)  # contents[0] unused longest, contents[11] most recently
    store = SummaryFolder.open(cache_dir)
    assert store is not None
    names = [_entry_name(store, content) for content in contents]
    assert store.load("outline", contents[0]) == [True, None]  # an old entry this run uses
    store.save("outline", b"module new\n", [False, None])  # and one it adds: the store grew
    store.close()
    kept = _entries(cache_dir)
    assert len(kept) == 6
    assert names[0] in kept and _entry_name(store, b"module new\n") in kept
    assert kept - {names[0], _entry_name(store, b"module new\n")} == set(names[8:])  # the four used last


def test_a_run_that_adds_nothing_prunes_nothing(tmp_path, small_bound):
    cache_dir = tmp_path / "cache"
    contents = _earlier_runs(cache_dir, 12)
    store = SummaryFolder.open(cache_dir)
    assert store is not None
    assert store.load("outline", contents[3]) is not None
    store.close()
    assert len(_entries(cache_dir)) == 12


def test_entries_the_run_used_are_kept_even_over_the_bound(tmp_path, small_bound):
    cache_dir = tmp_path / "cache"
    contents = _earlier_runs(cache_dir, 12)
    store = SummaryFolder.open(cache_dir)
    assert store is not None
    for content in contents:
        assert store.load("outline", content) is not None
    store.save("outline", b"module new\n", [False, None])
    store.close()
    assert len(_entries(cache_dir)) == 13


def test_edits_of_a_module_leave_no_pile_of_summaries(tmp_path, small_bound):
    """Each edit of data.py makes new entries (its content changed); runs through lint_paths keep
    the store within the bound, and the last version's summary is still read from it."""
    root = write_project(tmp_path / "project", {"train.py": TRAINING_SCRIPT})
    (root / "pyproject.toml").write_text("")
    cache_dir = tmp_path / "cache"
    for edit in range(12):
        (root / "data.py").write_text(LOADER_MODULE + f"\nEDIT = {edit}\n")
        cache = ResultCache(cache_dir, "s")
        codes = [d.code for d in lint_paths([str(root)], select_rules(), [], jobs=1, cache=cache)]
        cache.save()
        assert codes == ["DDP001"]
        _old(cache_dir / __version__ / SUMMARY_FOLDER_NAME, 1)  # what the next run sees changed was a day ago
        for entry in (cache_dir / __version__ / SUMMARY_FOLDER_NAME).glob("*.json"):
            used = entry.stat().st_mtime_ns - DAY_NS  # each run a day after the one before
            os.utime(entry, ns=(used, used))
    assert len(_entries(cache_dir)) <= 10


def _old(path: Path, days: int) -> None:
    then = time.time_ns() - days * DAY_NS
    os.utime(path, ns=(then, then))


def test_an_old_version_folder_goes_once_unused_for_long(tmp_path):
    cache_dir = tmp_path / "cache"
    assert write_owned_json(cache_dir, "first.json", {"a": 1}) is None
    for name in ("0.0.1", "0.0.2", "notes"):
        (cache_dir / name).mkdir()
        (cache_dir / name / "inside.json").write_text("{}")
    _old(cache_dir / "0.0.1", cache_module.OLD_VERSION_DAYS + 1)
    _old(cache_dir / "0.0.2", cache_module.OLD_VERSION_DAYS - 1)
    _old(cache_dir / "notes", cache_module.OLD_VERSION_DAYS + 1)  # not a version's folder: not ours to judge
    _old(cache_dir / __version__, cache_module.OLD_VERSION_DAYS + 1)  # this version's: in use now
    assert write_owned_json(cache_dir, "second.json", {"b": 2}) is None
    assert sorted(path.name for path in cache_dir.iterdir() if path.is_dir()) == sorted(["0.0.2", "notes", __version__])
    assert (cache_dir / __version__ / "first.json").exists()


def test_a_link_named_like_a_version_is_not_followed(tmp_path):
    cache_dir = tmp_path / "cache"
    assert write_owned_json(cache_dir, "first.json", {"a": 1}) is None
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("mine")
    (cache_dir / "0.0.1").symlink_to(elsewhere, target_is_directory=True)
    _old(elsewhere, cache_module.OLD_VERSION_DAYS + 1)
    assert write_owned_json(cache_dir, "second.json", {"b": 2}) is None
    assert (elsewhere / "keep.txt").read_text() == "mine"
