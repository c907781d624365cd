"""The language server's worker keeps a workspace's project model while the folders it was listed
from are unchanged (lsp/analysis.py `_Projects`, discovery.Listings(stamped=True)): past
PROJECT_LIST_TTL_S it lists the workspace again only if a module may have been added, removed or
renamed. In process, without a server: the worker's own object, with its clock moved on."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from ddplint.discovery import RECENT_CHANGE_NS, Listings, project_modules
from ddplint.lsp import analysis


def age(path: Path, seconds: float = 60) -> None:
    """Set a folder's modification time back, as if its last change were long past."""
    then = time.time_ns() - int(seconds * 1e9)
    os.utime(path, ns=(then, then))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    (root / "pyproject.toml").write_text("")
    (root / "train.py").write_text("import pkg.data\n")
    (root / "pkg" / "data.py").write_text("def build():\n    return 1\n")
    (root / "pkg" / "__init__.py").write_text("")
    for folder in (root, root / "pkg"):
        age(folder)
    return root


@pytest.fixture
def projects(monkeypatch) -> analysis._Projects:
    monkeypatch.setattr(analysis, "PROJECT_LIST_TTL_S", 0.0)  # every analysis past the time to list again
    return analysis._Projects()


def test_an_unchanged_workspace_keeps_its_project_model(workspace, projects):
    first = projects.for_document(str(workspace / "train.py"))
    assert first is not None
    (workspace / "pkg" / "data.py").write_text("def build():\n    return 2\n")  # content: no listing change
    assert projects.for_document(str(workspace / "train.py")) is first


@pytest.mark.parametrize("change", ["add", "remove", "rename", "add in a new folder"])
def test_a_module_added_removed_or_renamed_is_listed_again(workspace, projects, change):
    train = str(workspace / "train.py")
    first = projects.for_document(train)
    assert first is not None
    data = workspace / "pkg" / "data.py"
    expected = set(first.files)
    if change == "add":
        (workspace / "pkg" / "more.py").write_text("")
        expected.add(os.path.realpath(workspace / "pkg" / "more.py"))
    elif change == "remove":
        data.unlink()
        expected.discard(os.path.realpath(data))
    elif change == "rename":
        data.rename(workspace / "pkg" / "loaders.py")
        expected = (expected - {os.path.realpath(data)}) | {os.path.realpath(workspace / "pkg" / "loaders.py")}
    else:
        (workspace / "pkg" / "sub").mkdir()
        (workspace / "pkg" / "sub" / "deep.py").write_text("")
        expected.add(os.path.realpath(workspace / "pkg" / "sub" / "deep.py"))
    again = projects.for_document(train)
    assert again is not first and again is not None
    assert again.files == expected


def test_a_folder_changed_just_before_it_was_listed_is_never_trusted(workspace, projects):
    """A change in the same tick of the file system's clock as the listing would leave the
    folder's time as it was: a folder modified that recently is listed again each time."""
    (workspace / "pkg" / "fresh.py").write_text("")  # pkg/ now modified just now
    first = projects.for_document(str(workspace / "train.py"))
    assert projects.for_document(str(workspace / "train.py")) is not first


def test_listings_are_unchanged_only_while_no_listed_folder_changes(workspace):
    listings = Listings(stamped=True)
    modules = project_modules([str(workspace / "train.py")], listings)
    assert str(workspace / "pkg" / "data.py") in modules
    assert listings.unchanged()
    age(workspace / "pkg", RECENT_CHANGE_NS / 1e9 / 2)  # another time, not a recent one: a change
    assert not listings.unchanged()
    assert not Listings().unchanged()  # not stamped: never vouches
