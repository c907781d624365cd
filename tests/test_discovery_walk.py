"""One walk of the tree per run, and each folder's project root worked out once.

A run lists every folder once (`discovery.Listings`, shared by `discover` and `project_modules`)
and finds project roots per folder (`analysis.project.ProjectRoots`). Both are answers the run
used to work out per path; these tests hold them to the per-path answers: nested projects,
linked files and folders, virtual environments, folders that cannot be listed."""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Optional

import pytest

from ddplint import discovery
from ddplint.analysis.project import PROJECT_MARKERS, ProjectRoots, project_root
from ddplint.discovery import Listings, discover, project_modules


def root_walking_up(path: str) -> Optional[str]:
    """The per-path answer, written out: from the file's real folder up to `/`, the first folder
    holding a marker."""
    folder = os.path.dirname(os.path.realpath(path))
    while True:
        if any(os.path.exists(os.path.join(folder, marker)) for marker in PROJECT_MARKERS):
            return folder
        if os.path.dirname(folder) == folder:
            return None
        folder = os.path.dirname(folder)


def test_a_file_in_a_nested_project_gets_its_own_root(tmp_path):
    outer = tmp_path / "outer"
    (outer / "pkg" / "inner" / "src").mkdir(parents=True)
    (outer / "pyproject.toml").write_text("")
    (outer / "pkg" / "inner" / "setup.cfg").write_text("")
    files = [outer / "train.py", outer / "pkg" / "a.py", outer / "pkg" / "inner" / "b.py", outer / "pkg" / "inner" / "src" / "c.py"]
    for file in files:
        file.write_text("")
    roots = ProjectRoots()
    # The outer file first, so the folders above the nested project are answered before it.
    answers = [roots.of(str(file)) for file in files]
    assert answers == [str(outer), str(outer), str(outer / "pkg" / "inner"), str(outer / "pkg" / "inner")]
    # And the other way round: the nested project's folders answered first.
    roots = ProjectRoots()
    assert [roots.of(str(file)) for file in reversed(files)] == answers[::-1]


def test_a_linked_file_belongs_to_the_project_it_leads_to(tmp_path):
    (tmp_path / "here").mkdir()
    (tmp_path / "there").mkdir()
    (tmp_path / "there" / ".git").mkdir()
    (tmp_path / "here" / "pyproject.toml").write_text("")
    (tmp_path / "there" / "real.py").write_text("")
    (tmp_path / "here" / "plain.py").write_text("")
    os.symlink(tmp_path / "there" / "real.py", tmp_path / "here" / "linked.py")
    roots = ProjectRoots()
    assert roots.of(str(tmp_path / "here" / "plain.py")) == str(tmp_path / "here")
    # Same folder as plain.py, but the file leads elsewhere: the answer is not the folder's.
    assert roots.of(str(tmp_path / "here" / "linked.py")) == str(tmp_path / "there")


def test_roots_per_folder_equal_roots_per_file_over_random_trees(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rng = random.Random(7)
    for case in range(12):
        base = tmp_path / f"case{case}"
        folders = [base]
        for _ in range(rng.randint(3, 12)):
            folder = rng.choice(folders) / f"d{len(folders)}"
            folder.mkdir(parents=True)
            folders.append(folder)
        for folder in rng.sample(folders, rng.randint(0, 3)):
            (folder / rng.choice(PROJECT_MARKERS)).mkdir()  # a folder counts as a marker too (.git)
        linked = rng.choice(folders[1:])
        os.symlink(linked, base / "alias")  # a folder reached through a link
        files = []
        for folder in folders:
            (folder / "m.py").write_text("")
            files.append(str(folder / "m.py"))
        files.append(str(base / "alias" / "m.py"))
        files.append(os.path.relpath(files[-1]))  # spelled relative to the working folder
        rng.shuffle(files)
        roots = ProjectRoots()
        assert [roots.of(file) for file in files] == [root_walking_up(file) for file in files]
        assert [project_root(file) for file in files] == [root_walking_up(file) for file in files]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    for folder in ("src/pkg", "src/pkg/deep", "build", "tools", ".venv/lib", "env2"):
        (root / folder).mkdir(parents=True)
    (root / "pyproject.toml").write_text("")
    for name in ("train.py", "src/pkg/a.py", "src/pkg/deep/b.py", "build/gen.py", "tools/t.py", ".venv/lib/v.py", "env2/e.py", "nb.ipynb"):
        (root / name).write_text("")
    (root / "env2" / "pyvenv.cfg").write_text("")  # a virtual environment under any name
    (root / "tools" / "pyvenv.cfg").symlink_to(root / "missing")  # a broken link is no marker
    return root


def test_one_listing_per_folder_for_discovery_and_the_project_model(project, monkeypatch):
    listed: list[str] = []
    real_scandir = os.scandir

    def counting(path):
        listed.append(os.path.abspath(path))
        return real_scandir(path)

    monkeypatch.chdir(project)
    expected_found = list(discover(["."]))
    expected_modules = project_modules([path for path, _ in expected_found])
    monkeypatch.setattr(discovery.os, "scandir", counting)
    listings = Listings()
    found = list(discover(["."], None, False, False, listings))
    modules = project_modules([path for path, problem in found if problem is None], listings)
    assert (found, modules) == (expected_found, expected_modules)
    assert sorted(listed) == sorted(set(listed))  # no folder listed twice
    assert {os.path.relpath(path, project) for path, _ in found} == {
        "train.py", "nb.ipynb", "src/pkg/a.py", "src/pkg/deep/b.py", "tools/t.py"
    }  # build/ is a default exclude, .venv/ and env2/ virtual environments


def test_walk_answers_do_not_depend_on_what_was_listed_before(project, monkeypatch):
    """The project model's walk skips only the folders never worth descending into, discovery's
    also the configured ones: sharing listings changes neither."""
    monkeypatch.chdir(project)
    excluded = lambda path: os.path.basename(path) in ("deep", "build", ".venv")  # noqa: E731
    alone = list(discover(["."], excluded)), project_modules(["train.py"])
    listings = Listings()
    shared = list(discover(["."], excluded, False, False, listings)), project_modules(["train.py"], listings)
    assert shared == alone
    assert str(project / "src" / "pkg" / "deep" / "b.py") in shared[1]  # excluded, but a project module


def ignored_walking_up(rules, path: str, is_directory: bool) -> bool:
    """The per-path answer of ignore.IgnoreRules, written out: every folder from the path's own
    up to the boundary asked in turn, the first ignore file with a verdict deciding."""
    absolute = os.path.abspath(path)
    boundary = rules._repository or rules._walk_root
    if not absolute.startswith(os.path.join(boundary, "")):
        return False
    directory = os.path.dirname(absolute)
    while True:
        relative = absolute[len(os.path.join(directory, "")):] + ("/" if is_directory else "")
        for spec in rules._specs_in(directory):
            if spec.check_file(relative).include is not None:
                return bool(spec.check_file(relative).include)
        if directory == boundary:
            return False
        directory = os.path.dirname(directory)


def test_ignore_files_found_once_per_folder_answer_as_per_path(tmp_path, monkeypatch):
    from ddplint.ignore import IgnoreRules

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "no-config"))
    monkeypatch.setenv("HOME", str(tmp_path / "no-home"))
    rng = random.Random(3)
    patterns = ["*.py", "!keep.py", "gen/", "a*.py", "/top.py", "d1/", "!d3/", "x/**/y.py", "b.py"]
    for case in range(8):
        base = tmp_path / f"case{case}"
        folders = [base]
        for _ in range(8):
            folders.append(rng.choice(folders) / rng.choice(["d1", "d2", "d3", "gen", "x", "y"]))
            folders[-1].mkdir(parents=True, exist_ok=True)
        for folder in rng.sample(folders, 3):
            (folder / rng.choice([".gitignore", ".ignore"])).write_text("\n".join(rng.sample(patterns, 3)) + "\n")
        paths = [(str(folder / name), False) for folder in folders for name in ("keep.py", "a1.py", "b.py", "top.py", "y.py")]
        paths += [(str(folder), True) for folder in folders[1:]]
        rng.shuffle(paths)
        rules = IgnoreRules(str(base))
        assert [rules.is_ignored(path, directory) for path, directory in paths] == [
            ignored_walking_up(IgnoreRules(str(base)), path, directory) for path, directory in paths
        ]


def test_the_index_holds_the_real_path_of_every_module_however_spelled(tmp_path, monkeypatch):
    """A checked file is given twice (as named, and as its project's walk found it): resolved
    once, the index still holds each file's real path, `..` after a link resolved through it."""
    from ddplint.analysis.project import ProjectIndex

    (tmp_path / "proj" / "pkg").mkdir(parents=True)
    (tmp_path / "other").mkdir()
    (tmp_path / "proj" / "pyproject.toml").write_text("")
    for name in ("proj/train.py", "proj/pkg/data.py", "other/data.py", "other/x.py"):
        (tmp_path / name).write_text("")
    os.symlink(tmp_path / "other", tmp_path / "proj" / "pkg" / "link")
    os.symlink(tmp_path / "other" / "x.py", tmp_path / "proj" / "linked.py")
    monkeypatch.chdir(tmp_path / "proj")
    checked = ["train.py", "pkg/data.py", "pkg/link/../data.py", "linked.py", "./train.py"]
    modules = project_modules(checked)
    index = ProjectIndex(modules, lambda data, name: True)
    assert index.files == {os.path.realpath(path) for path in modules}
    assert str(tmp_path / "data.py") in index.files  # other/.. is tmp_path: no such file, but named
    assert str(tmp_path / "other" / "x.py") in index.files
