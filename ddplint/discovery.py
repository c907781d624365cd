"""Which files a run checks, and which modules make up their projects.

`discover()` walks the paths given on the command line: explicit files as named, `.py` / `.ipynb`
files under folders (configured excludes, virtual environments and, with `respect_gitignore`,
the ignore files of ddplint/ignore.py left out); `project_modules()` adds every Python module of
the projects the checked files belong to (analysis.project.project_root), for the cross-module
analysis. No source file is read here: which files exist is all that is decided.
"""

from __future__ import annotations

import os
import stat
import time
from itertools import islice
from pathlib import Path
from typing import Callable, Iterator, Optional, Sequence, Union

from ddplint.analysis.project import ProjectRoots
from ddplint.config import DEFAULT_EXCLUDE
from ddplint.ignore import IgnoreRules
from ddplint.source import reason_of

# The configuration's default excludes, as a set: discovery without settings and the project
# model (which never applies a configuration) skip the same folders.
EXCLUDED_DIRS = frozenset(DEFAULT_EXCLUDE)

# Found under directories. Not `.pyi`: stubs hold signatures, never the calls any rule looks at;
# named on the command line, they are still checked.
SOURCE_SUFFIXES = (".py", ".ipynb")

# What makes a folder a virtual environment (never walked).
VIRTUALENV_MARKER = "pyvenv.cfg"

def discover(
    paths: Sequence[str],
    is_excluded: Optional[Callable[[str], bool]] = None,
    force_exclude: bool = False,
    respect_gitignore: bool = False,
    listings: Optional["Listings"] = None,
) -> Iterator[tuple[str, Optional[str]]]:
    """(path, problem) for every file to check: explicit files as given (unless `force_exclude`
    and excluded), `.py`/`.ipynb` files under directories (excluded ones skipped, and with
    `respect_gitignore` those that `.gitignore`, `.ignore` or git's global excludes name:
    ddplint/ignore.py), sorted for a stable order. `is_excluded` comes from the configuration
    (config.Settings.is_excluded). A directory that cannot be listed comes with its problem, in
    its place in that order."""
    for given in paths:
        try:
            is_directory = stat.S_ISDIR(os.stat(given).st_mode)
        except FileNotFoundError:
            if not os.path.lexists(given):
                yield given, "no such file or directory"
                continue
            is_directory = False  # a broken link: reading it says so
        except OSError as exc:  # a folder on the way that may not be searched, a link loop
            yield given, f"cannot read: {reason_of(exc)}"
            continue
        if is_directory:
            ignored = _ignore_rules(given) if respect_gitignore else None
            walked = _walk_source_files(given, is_excluded, ignored, listings)
            yield from sorted(walked, key=lambda found: _path_order(found[0]))
        elif not (force_exclude and is_excluded is not None and is_excluded(given)):
            yield given, None  # named: read whatever it is, so that a pipe or a device is reported


def _ignore_rules(directory: str) -> Optional[IgnoreRules]:
    """The ignore files' rules for a walk of `directory`; None (nothing ignored) when the
    directory named is itself ignored: what is named on the command line is checked."""
    rules = IgnoreRules(directory)
    return None if rules.is_ignored(directory, is_directory=True) else rules


# A project with more modules than this is indexed only up to this many (in walk order): imports
# of a checked file from modules beyond them are not followed. Keeps a run on a file inside a huge
# tree (a home folder under git) from walking all of it.
PROJECT_MODULES_LIMIT = 20_000


def project_modules(checked: Sequence[str], listings: Optional["Listings"] = None) -> list[str]:
    """The checked files and every Python module of the projects they belong to (analysis.project.
    project_root: nearest pyproject.toml / setup.cfg / .git ...), so that a file gets the same
    findings whether it is checked alone, with its folder, from stdin or in the editor: what it
    imports from the project is summarised either way. Folders never worth descending into
    (EXCLUDED_DIRS, virtual environments) are skipped; the configuration's excludes are not,
    since an excluded module still runs when the training script imports it. For the same reason
    (and one rule for both) files that `.gitignore` names stay in the project model too.
    `listings`: the folders discovery listed for this run, so that the tree is read once."""
    modules = [path for path in checked if path.endswith(".py")]
    roots_of = ProjectRoots()
    roots = sorted({root for root in map(roots_of.of, modules) if root is not None})
    listings = Listings() if listings is None else listings
    for root in roots:
        walked = (path for path, problem in _walk_source_files(root, None, None, listings) if problem is None and path.endswith(".py"))
        modules.extend(islice(walked, PROJECT_MODULES_LIMIT))
    return modules


class _Listing:
    """One folder's entries as a walk needs them: the folders to descend into (links to folders
    are not followed) and the files that may be sources, by name in the order listed."""

    __slots__ = ("folders", "sources", "names_virtualenv_marker")

    def __init__(self, folder: str, entries: list[os.DirEntry]) -> None:
        self.names_virtualenv_marker = any(entry.name == VIRTUALENV_MARKER for entry in entries)
        self.folders: list[str] = []
        self.sources: list[str] = []
        for entry in entries:
            if _is_directory(entry):
                if not entry.is_symlink():
                    self.folders.append(entry.name)
            elif entry.name.endswith(SOURCE_SUFFIXES) and _may_be_read(entry, os.path.join(folder, entry.name)):
                self.sources.append(entry.name)


class Listings:
    """The folders one run has listed, by absolute path: discovery walks the paths given, the
    project model walks each project's root, usually the same tree (`ddplint .` in a project);
    each folder is read once. Kept for one run only: files come and go between runs.

    `stamped`: also note each folder's modification time before listing it, so that
    `unchanged()` can tell later whether a listing still holds (the language server keeps a
    workspace's list of modules while it does)."""

    def __init__(self, stamped: bool = False) -> None:
        self._by_folder: dict[str, Union[_Listing, str]] = {}
        self._stamps: Optional[dict[str, Optional[int]]] = {} if stamped else None

    def of(self, folder: str) -> Union[_Listing, str]:
        """The folder's listing, or the problem that kept it from being read."""
        absolute = os.path.abspath(folder)
        listing = self._by_folder.get(absolute)
        if listing is None:
            if self._stamps is not None:  # before the listing: a change during it shows later
                self._stamps[absolute] = _trusted_mtime(absolute)
            try:
                with os.scandir(folder) as found:
                    listing = _Listing(absolute, list(found))
            except OSError as exc:
                listing = f"cannot read directory: {reason_of(exc)}"
            self._by_folder[absolute] = listing
        return listing

    def unchanged(self) -> bool:
        """Whether every folder listed (stamped) still has the modification time it had then: no
        entry was added, removed or renamed in any of them since. False when unsure (not stamped,
        a folder modified too recently for its time to tell, one that cannot be stat-ed)."""
        if self._stamps is None:
            return False
        for folder, stamp in self._stamps.items():
            if stamp is None or _mtime(folder) != stamp:
                return False
        return True


# A folder modified this recently before it was listed may change again within the same tick of
# its file system's clock (coarse on some: whole seconds, two on FAT) without its time changing:
# such a listing is never trusted to still hold (git's "racily clean" entries, the same idea).
RECENT_CHANGE_NS = 3 * 10**9


def _trusted_mtime(folder: str) -> Optional[int]:
    """The folder's modification time, or None where it cannot vouch for the listing."""
    stamp = _mtime(folder)
    return None if stamp is None or stamp >= time.time_ns() - RECENT_CHANGE_NS else stamp


def _mtime(folder: str) -> Optional[int]:
    try:
        return os.stat(folder).st_mtime_ns
    except OSError:
        return None


def _walk_source_files(
    root: str,
    is_excluded: Optional[Callable[[str], bool]] = None,
    ignored: Optional[IgnoreRules] = None,
    listings: Optional[Listings] = None,
) -> Iterator[tuple[str, Optional[str]]]:
    """(path, problem) for the `.py` / `.ipynb` files under `root`, and for each directory that
    cannot be listed. A loop over a stack, not recursion: a tree 1,000 folders deep is walked too.
    Links to directories are not followed. Files that are not regular files (named pipes, devices,
    sockets, links to them) are passed over: reading one could block or never end. A link that
    leads nowhere is kept, so that it is reported as unreadable."""
    listings = Listings() if listings is None else listings
    # Strings, not pathlib: building a Path per file and directory was most of a warm run's walk.
    pending = [str(Path(root))]  # pathlib's spelling ("./src/" -> "src")
    while pending:
        base = pending.pop()
        listing = listings.of(base)
        if isinstance(listing, str):
            yield base, listing
            continue
        for name in listing.folders:
            path = _join(base, name)
            if not _excluded_directory(name, path, is_excluded) and (ignored is None or not ignored.is_ignored(path, is_directory=True)):
                if not _is_virtualenv(path, listings):
                    pending.append(path)
        for name in listing.sources:
            path = _join(base, name)
            if (is_excluded is None or not is_excluded(path)) and (ignored is None or not ignored.is_ignored(path, False)):
                yield path, None


def _is_directory(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _excluded_directory(name: str, path: str, is_excluded: Optional[Callable[[str], bool]]) -> bool:
    return name in EXCLUDED_DIRS if is_excluded is None else is_excluded(path)


def _may_be_read(entry: os.DirEntry, path: str) -> bool:
    """A regular file (links followed), or a link that leads nowhere (reported as unreadable)."""
    try:
        if entry.is_file():
            return True
        return entry.is_symlink() and not os.path.exists(path)
    except OSError:
        return True  # cannot tell: reading it will say why


def _join(directory: str, name: str) -> str:
    """`str(Path(directory, name))` for a directory already spelled as pathlib spells it."""
    return name if directory == "." else os.path.join(directory, name)


def _path_order(path: str) -> list[str]:
    """The order of the Paths discovery used to sort (component by component; case-insensitive
    where the system is): the same files come out in the same order."""
    return os.path.normcase(path).split(os.sep)


def _is_virtualenv(path: str, listings: Listings) -> bool:
    """A folder holding `pyvenv.cfg`: read off its listing (which the walk needs anyway if it
    descends), confirmed with a look-up only where the name is there (a broken link is no marker)."""
    listing = listings.of(path)
    return not isinstance(listing, str) and listing.names_virtualenv_marker and os.path.exists(os.path.join(path, VIRTUALENV_MARKER))


__all__ = ["EXCLUDED_DIRS", "Listings", "PROJECT_MODULES_LIMIT", "SOURCE_SUFFIXES", "discover", "project_modules"]
