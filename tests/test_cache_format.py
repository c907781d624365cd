"""The cache file's shared stamp table: an entry is trusted only against the stamps of the project
files it was stored with, whatever other entries recorded since; any file that is not exactly
what this version writes (an older layout, damage) reads as an empty cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ddplint.analysis.project import ProjectIndex
from ddplint.api import lint_paths
from ddplint.cache import FileStamp, ResultCache
from ddplint.rules import select_rules
from loader_project import LOADER_MODULE, TRAINING_SCRIPT, write_project

RULES = "DDP001"
@pytest.fixture
def project(tmp_path: Path) -> Path:
    """data.py offers a loader; a.py and c.py (and more importers) import it."""
    return write_project(tmp_path / "proj", {f"{name}.py": TRAINING_SCRIPT for name in ("a", "c", "d", "e")})


def index(root: Path) -> ProjectIndex:
    return ProjectIndex(sorted(str(p) for p in root.glob("*.py")), lambda data, name: True)


def store(cache: ResultCache, path: Path, project: ProjectIndex) -> None:
    cache.store(str(path), "digest", FileStamp.of(str(path)), RULES, [], ["data"], project)


def hit(cache: ResultCache, path: Path, project: ProjectIndex) -> bool:
    return cache.by_stamp(str(path), FileStamp.of(str(path)), RULES, project) is not None


def edit_data(root: Path) -> None:
    (root / "data.py").write_text(LOADER_MODULE + "\n# edited: another size, another mtime\n")


def test_an_entry_stored_against_an_older_stamp_stays_stale_after_another_records_the_new_one(project, tmp_path):
    a, c = project / "a.py", project / "c.py"
    first = ResultCache(tmp_path / "cache", "k")
    store(first, a, index(project))  # A: data.py at its first stamp
    assert first.save() is None
    edit_data(project)
    second = ResultCache(tmp_path / "cache", "k")
    store(second, c, index(project))  # C: data.py at its new stamp
    assert not hit(second, a, index(project))  # in the same run, too
    assert second.save() is None
    third = ResultCache(tmp_path / "cache", "k")
    now = index(project)
    assert hit(third, c, now)
    assert not hit(third, a, now)
    assert third.known_hash(str(a), RULES, now) is None


def test_an_imported_file_added_under_an_imported_name_makes_the_entry_stale(project, tmp_path):
    a = project / "a.py"
    cache = ResultCache(tmp_path / "cache", "k")
    store(cache, a, index(project))
    assert hit(cache, a, index(project))
    (project / "sub").mkdir()
    (project / "sub" / "data.py").write_text(LOADER_MODULE)  # `data` now names two files
    with_sub = ProjectIndex([*(str(p) for p in project.glob("*.py")), str(project / "sub" / "data.py")], lambda d, n: True)
    assert not hit(cache, a, with_sub)


def test_each_imported_files_stamp_is_written_once(project, tmp_path):
    cache = ResultCache(tmp_path / "cache", "k")
    now = index(project)
    for name in ("a", "c", "d", "e"):
        store(cache, project / f"{name}.py", now)
    assert cache.save() is None
    stored = json.loads(cache.path.read_text())
    assert [row[0] for row in stored["stamps"]] == [str(project / "data.py")]
    reloaded = ResultCache(tmp_path / "cache", "k")
    assert all(hit(reloaded, project / f"{name}.py", index(project)) for name in ("a", "c", "d", "e"))


def test_an_entry_stored_without_a_project_is_valid_only_without_one(project, tmp_path):
    a = project / "a.py"
    cache = ResultCache(tmp_path / "cache", "k")
    cache.store(str(a), "digest", FileStamp.of(str(a)), RULES, [], (), None)
    assert cache.by_stamp(str(a), FileStamp.of(str(a)), RULES, None) == []
    assert not hit(cache, a, index(project))


def run(root: Path, cache: ResultCache) -> list:
    return list(lint_paths([str(root)], select_rules(), [], jobs=1, cache=cache))


def old_layout(root: Path) -> dict:
    """What the previous version wrote: one object per file, each with its imports' stamps."""
    entries = {}
    for path in root.glob("*.py"):
        stamp = FileStamp.of(str(path))
        entries[str(path)] = {
            "size": stamp.size, "mtime_ns": stamp.mtime_ns, "hash": "0" * 32, "rules": RULES,
            "diagnostics": [], "project": True, "import_words": [], "imports": {},
        }
    return entries


DAMAGED = {
    "truncated": lambda root, good: good[: len(good) // 2],
    "old layout": lambda root, good: json.dumps(old_layout(root)),
    "a list": lambda root, good: "[1, 2, 3]",
    "entries a list": lambda root, good: json.dumps({**json.loads(good), "entries": []}),
    "names index out of range": lambda root, good: _with_entries(good, lambda e: [*e[:3], [10**6], e[4]]),
    "names index a list": lambda root, good: _with_entries(good, lambda e: [*e[:3], [[0]], e[4]]),
    "names index a float": lambda root, good: _with_entries(good, lambda e: [*e[:3], [0.0, 1.5], e[4]]),
    "names not a list": lambda root, good: _with_entries(good, lambda e: [*e[:3], 0, e[4]]),
    "entry too short": lambda root, good: _with_entries(good, lambda e: e[:3]),
    "diagnostics malformed": lambda root, good: _with_entries(good, lambda e: [*e[:4], [{"code": 1}]]),
    "stamp rows malformed": lambda root, good: json.dumps({**json.loads(good), "stamps": [["x", "y"], 3, None]}),
    "names rows malformed": lambda root, good: json.dumps(
        {**json.loads(good), "names": [[1, [0]], ["data", [-1]], ["data", "x"], ["data", [0, 10**6]], [], None]}
    ),
}


def _with_entries(text: str, change) -> str:
    content = json.loads(text)
    content["entries"] = {path: change(entry) for path, entry in content["entries"].items()}
    return json.dumps(content)


@pytest.mark.parametrize("damage", sorted(DAMAGED))
def test_an_old_or_damaged_cache_file_is_ignored_and_replaced(project, tmp_path, damage):
    cold = ResultCache(tmp_path / "cache", "k")
    expected = run(project, cold)
    assert any(d.code == "DDP001" for d in expected)  # the cross-module finding is in the results
    assert cold.save() is None
    good = cold.path.read_text()
    cold.path.write_text(DAMAGED[damage](project, good))
    damaged = ResultCache(tmp_path / "cache", "k")
    assert run(project, damaged) == expected
    assert damaged.save() is None  # what it wrote is a cache this version reads
    assert run(project, ResultCache(tmp_path / "cache", "k")) == expected


def test_warm_results_equal_cold_ones_and_follow_the_imported_module(project, tmp_path):
    cold = ResultCache(tmp_path / "cache", "k")
    expected = run(project, cold)
    cold.save()
    warm = ResultCache(tmp_path / "cache", "k")
    assert run(project, warm) == expected
    assert not warm._dirty  # nothing changed: nothing to write
    (project / "data.py").write_text(LOADER_MODULE.replace("shuffle=True", "sampler=DistributedSampler(dataset)").replace(
        "import DataLoader", "import DataLoader, DistributedSampler"))
    after_edit = run(project, ResultCache(tmp_path / "cache", "k"))
    assert after_edit == run(project, None)
    assert not any(d.code == "DDP001" for d in after_edit)


def test_a_file_whose_import_words_name_itself_is_a_hit_while_unchanged(project, tmp_path):
    """A names row lists every file its word names, the importer's own too: unchanged, still a hit."""
    a = project / "a.py"
    cache = ResultCache(tmp_path / "cache", "k")
    cache.store(str(a), "digest", FileStamp.of(str(a)), RULES, [], ["a", "data"], index(project))
    assert cache.save() is None
    reloaded = ResultCache(tmp_path / "cache", "k")
    assert hit(reloaded, a, index(project))
    assert reloaded.known_hash(str(a), RULES, index(project)) == "digest"
