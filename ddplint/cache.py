"""Results of earlier runs, so that a second run over unchanged files parses nothing.

One JSON file per (ddplint version, settings) under `.ddplint_cache/<version>/`. An entry is
trusted when the file's stamp (size, mtime, ctime, inode, device: what `stat` gives) is unchanged
(no read at all, as ruff does) or, failing that, when the content hash matches (a `touch` or a
fresh checkout costs a read and a hash, not a parse). JSON, not pickle: a cache directory can come
from anywhere (a shared checkout, an archive), and loading it must never run code.

Nor is a cache trusted because it is there. A cache file counts only if it carries the token of
the folder's key: random bytes the first run to save here wrote to `key`, taken together with
where that file lies on this machine (device, inode, ctime: what no copy, checkout or archive of
the folder reproduces, and what no one can set). A cache folder committed to a repository, copied
from another machine or unpacked from an archive has entries that do not verify: they are
discarded and the file rewritten, or, when git tracks the folder, the cache is left alone for the
run, with a note. No link in the cache folder is followed: every file is opened relative to the
folder's own handle with O_NOFOLLOW, and a cache folder, version folder or key that is a link
makes the run go without the cache (it says so once).
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Optional, Sequence

try:  # hashlib's blake2b without hashlib, which loads OpenSSL for its other algorithms (~3 ms of a warm run)
    from _blake2 import blake2b
except ImportError:  # an interpreter without CPython's module
    from hashlib import blake2b

from ddplint import __version__
from ddplint.diagnostics import Applicability, Diagnostic, Edit, Fix, Location, Severity

if TYPE_CHECKING:
    from ddplint.analysis.project import ProjectIndex

CACHE_DIR_NAME = ".ddplint_cache"
_PROJECT_MARKERS = ("pyproject.toml", "ddplint.toml", ".git")
# The cache folder's secret (`_KEY_LENGTH` hex digits, written once) and its temporary files,
# named after the process writing them (ddplint/leftovers.py): a killed run's are removed by the
# next save.
KEY_NAME = "key"
_KEY_LENGTH = 64
_TEMPORARY_PREFIX = "saving-"
# A cache file larger than this is damage (the torch package's is ~3 MB), not something to read.
_MAX_CACHE_BYTES = 256 * 2**20
# How much of a git index is searched for a tracked cache folder (a repository with a million
# files has a ~100 MB index).
_MAX_INDEX_BYTES = 512 * 2**20

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
# Files opened relative to a folder's handle (openat and friends): every POSIX system. Elsewhere
# (Windows) by path, with links refused by lstat.
_RELATIVE = os.open in os.supports_dir_fd and os.rename in os.supports_dir_fd and os.listdir in os.supports_fd


def content_hash(data: bytes) -> str:
    return blake2b(data, digest_size=16).hexdigest()


def content_hasher():
    """content_hash, fed in pieces (a file too large to read at once)."""
    return blake2b(digest_size=16)


def default_cache_dir(start: Optional[Path] = None) -> Path:
    """`.ddplint_cache` in the project root: the nearest folder, walking up from `start`, that holds
    a pyproject.toml, ddplint.toml or .git; the starting folder when there is none."""
    start = (start or Path.cwd()).resolve()
    for folder in (start, *start.parents):
        if any((folder / marker).exists() for marker in _PROJECT_MARKERS):
            return folder / CACHE_DIR_NAME
    return start / CACHE_DIR_NAME


def read_owned_json(directory: Path, name: str) -> Optional[dict]:
    """The JSON object `name` in this version's folder of the cache, if the folder's key vouches for
    it (its `owner` is the folder's token, as for the results cache): None when there is none, it is
    damaged or made elsewhere, or a link is in the way. For other parts of ddplint that keep facts
    between runs (`ddplint verify`'s record of which device saved a checkpoint)."""
    try:
        with _Folder.open(directory) as root:
            owner = _owner(root)
            with _Folder.open(directory / __version__, root) as version:
                data = _read_file(version, name)
    except (OSError, _Refused):
        return None
    try:
        content = json.loads(data) if data and owner else None
    except ValueError:
        return None
    if not isinstance(content, dict) or content.get("owner") != owner:
        return None
    return content


def write_owned_json(directory: Path, name: str, content: dict) -> Optional[str]:
    """`content`, stamped with the folder's token, as `name` in this version's folder, written whole
    or not at all and never through a link; returns why it could not be written, if so."""
    try:
        with _writable_version_folder(directory) as (version, owner):
            _write_file(version, name, json.dumps(dict(content, owner=owner), separators=(",", ":")).encode())
    except _Refused as refusal:
        return str(refusal)
    except OSError as exc:
        return f"cannot write cache in {directory}: {exc.strerror or exc}"
    return None


@dataclass(frozen=True)
class FileStamp:
    """What `stat` says of a file. Device and inode name the file itself (whatever path or link
    led to it); ctime changes with any change to it, and no one can set it back."""

    size: int
    mtime_ns: int
    ctime_ns: int = 0
    inode: int = 0
    device: int = 0

    @classmethod
    def of(cls, path: str) -> Optional["FileStamp"]:
        try:
            info = os.stat(path)
        except OSError:
            return None
        return cls(info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev)

    @property
    def row(self) -> list[int]:
        """As the cache file keeps it."""
        return [self.size, self.mtime_ns, self.ctime_ns, self.inode, self.device]


def _stamp_row(path: str) -> tuple[int, ...]:
    """`FileStamp.of(path).row`, all -1 for a file that cannot be stat-ed."""
    stamp = FileStamp.of(path)
    return (-1,) * 5 if stamp is None else tuple(stamp.row)


# The file's layout: {"format": _FORMAT, "owner": the folder's token (see the module's docstring),
#   "stamps": [[path, size, mtime_ns, ctime_ns, inode, device], ...]: each distinct stamp of a
#            project file some entry imports,
#   "names": [[word, [stamp rows]], ...]: each distinct answer to "the project files an import word
#            names" (all of them, a file's own too, with their stamps then),
#   "entries": {absolute path: [[size, mtime_ns, ctime_ns, inode, device], hash, rules, [names rows]
#               (null: stored without a project index), diagnostics]}}.
# A project file's stamp is written once however many files import it (written per entry, the
# stamps were 90 % of the torch package's cache, and loading them most of a warm run). Any other
# content, such as an older layout, reads as an empty cache.
_FORMAT = 4
_STAMP, _HASH, _RULES, _NAMES, _FINDINGS = range(5)
_ENTRY_LENGTH = 5


class ResultCache:
    """Diagnostics per file, valid for one ddplint version and one set of settings (`settings_key`:
    anything that changes results, such as the selected rules and the config)."""

    def __init__(self, directory: Path, settings_key: str):
        self.directory = directory
        digest = blake2b(f"{__version__}\0{settings_key}".encode(), digest_size=8).hexdigest()
        self.path = directory / __version__ / f"{digest}.json"
        # Why this run neither reads nor writes the cache (`save` says it, once), if it does not.
        self._refused: Optional[str] = None
        self._dirty = False  # set by _load when it discards a file: the file is rewritten
        self._entries, self._stamps, self._names = self._load()
        self._file_stamps: dict[str, tuple[int, ...]] = {}  # path -> its stamp row now: stat once per run
        # Each table row parsed and checked once per run, so that an entry's check is one set
        # operation: the rows' paths ("" if malformed), the stamp rows that are not current, the
        # names rows (None if malformed) and those that are current for `_checked_for`.
        self._row_paths: list[str] = []
        self._stale_rows: set[int] = set()
        self._parsed_names: list[Optional[tuple[str, tuple[int, ...], tuple[str, ...]]]] = []
        self._current_names: set[int] = set()
        self._checked_for: Optional["ProjectIndex"] = None
        self._names_checked = 0
        # Rows this run added, to add each once (`save` merges them with equal loaded ones).
        self._new_rows: dict[tuple, int] = {}
        self._new_names: dict[tuple[str, tuple[int, ...]], int] = {}

    def _load(self) -> tuple[dict[str, list], list, list]:
        """The cache file's tables, if the folder's key vouches for them. A file it does not vouch
        for (damaged, another layout, made elsewhere) is discarded and rewritten, unless git
        tracks the cache folder: then the run leaves the cache alone."""
        try:
            found = self._read()
        except _Refused as refusal:
            self._refused = str(refusal)
            return {}, [], []
        if found is None:
            return {}, [], []  # no cache yet
        data, owner = found
        tables = _tables(data, owner)
        if tables is not None:
            return tables
        if _tracked_by_git(Path(os.path.abspath(self.directory))):
            self._refused = (
                f"not using the cache in {self.directory}: git tracks files in it (committed?); "
                f"`git rm -r --cached {self.directory}` untracks them"
            )
        else:
            self._dirty = True
        return {}, [], []

    def _read(self) -> Optional[tuple[bytes, Optional[str]]]:
        """(the cache file's bytes, the folder's token) if there is a cache file: b"" for one that is
        damaged beyond reading (a folder in its place, too large); the token None without a key."""
        try:
            root = _Folder.open(self.directory)
        except OSError:  # none yet, or none to be had here (a file in its place): `save` says why
            return None
        with root:
            owner = _owner(root)
            try:
                version = _Folder.open(self.path.parent, root)
            except FileNotFoundError:
                return None
            except NotADirectoryError:  # a file in its place: replaced when the cache is saved
                return b"", owner
            with version:
                data = _read_file(version, self.path.name)
            return None if data is None else (data, owner)

    def _valid_entry(self, display_name: str, rules_key: str, project: Optional["ProjectIndex"]) -> Optional[list]:
        """The file's entry if it was made with these rules and the project files it imports are
        unchanged: for each import word, the same files (none added, none gone) with the same
        stamps. Whether the file itself is unchanged is the caller's question (stamp or hash).
        Anything malformed is a miss."""
        entry = self._entries.get(os.path.abspath(display_name))
        if type(entry) is not list or len(entry) != _ENTRY_LENGTH or entry[_RULES] != rules_key:
            return None
        names = entry[_NAMES]
        if names is None or project is None:  # stored without a project index: valid only without one
            return entry if names is None and project is None else None
        try:
            return entry if type(names) is list and self._current_for(project).issuperset(names) else None
        except TypeError:  # an unhashable index
            return None

    def _current_for(self, project: "ProjectIndex") -> set[int]:
        """The names rows that are current: their stamp rows are, and the word names the same
        files now. Each row is checked once a run (a run has one project index)."""
        if project is self._checked_for and self._names_checked == len(self._names):
            return self._current_names  # asked for every file: nothing new since the last time
        if project is not self._checked_for:
            self._checked_for, self._current_names, self._names_checked = project, set(), 0
        self._parse_rows()
        for index in range(self._names_checked, len(self._names)):
            parsed = self._parsed_names[index]
            if parsed is not None and self._stale_rows.isdisjoint(parsed[1]):
                word, _, paths = parsed
                if tuple(project.files_named((word,))) == paths:
                    self._current_names.add(index)
        self._names_checked = len(self._names)
        return self._current_names

    def _parse_rows(self) -> None:
        """Parses the table rows not yet parsed (each path stat-ed once a run)."""
        for index in range(len(self._row_paths), len(self._stamps)):
            row = self._stamps[index]
            well_formed = (
                type(row) is list and len(row) == 6 and type(row[0]) is str and row[0] != ""
                and all(type(value) is int for value in row[1:])
            )
            self._row_paths.append(row[0] if well_formed else "")
            if not well_formed or self._stamp_now(row[0]) != tuple(row[1:]):
                self._stale_rows.add(index)
        for index in range(len(self._parsed_names), len(self._names)):
            self._parsed_names.append(self._parse_name(self._names[index]))

    def _parse_name(self, record) -> Optional[tuple[str, tuple[int, ...], tuple[str, ...]]]:
        """(word, stamp rows, their paths) of a names row; None if malformed."""
        try:
            word, rows = record
            if type(word) is not str or type(rows) is not list or (rows and min(rows) < 0):
                return None
            paths = tuple(map(self._row_paths.__getitem__, rows))
        except (TypeError, ValueError, IndexError):
            return None
        return None if "" in paths else (word, tuple(rows), paths)

    def _stamp_now(self, path: str) -> tuple[int, ...]:
        if path not in self._file_stamps:
            self._file_stamps[path] = _stamp_row(path)
        return self._file_stamps[path]

    def by_stamp(
        self, display_name: str, stamp: Optional[FileStamp], rules_key: str, project: Optional["ProjectIndex"] = None
    ) -> Optional[list[Diagnostic]]:
        entry = self._valid_entry(display_name, rules_key, project)
        if entry is None or stamp is None or entry[_STAMP] != stamp.row:
            return None
        return _decode(entry[_FINDINGS], display_name)

    def known_hash(
        self, display_name: str, rules_key: str, project: Optional["ProjectIndex"] = None
    ) -> Optional[str]:
        """The content hash of a still-valid entry: a worker that finds the same hash skips the file."""
        entry = self._valid_entry(display_name, rules_key, project)
        return entry[_HASH] if entry is not None and isinstance(entry[_HASH], str) else None

    def by_content(
        self,
        display_name: str,
        digest: str,
        stamp: Optional[FileStamp],
        rules_key: str,
        project: Optional["ProjectIndex"] = None,
    ) -> Optional[list[Diagnostic]]:
        entry = self._valid_entry(display_name, rules_key, project)
        if entry is None or entry[_HASH] != digest:
            return None
        diagnostics = _decode(entry[_FINDINGS], display_name)
        if diagnostics is not None and stamp is not None:  # remember the new stamp
            words = [self._names[int(index)][0] for index in entry[_NAMES] or ()]  # current, so well formed
            self.store(display_name, digest, stamp, rules_key, diagnostics, words, project)
        return diagnostics

    def store(
        self,
        display_name: str,
        digest: str,
        stamp: Optional[FileStamp],
        rules_key: str,
        diagnostics: Sequence[Diagnostic],
        import_words: Sequence[str] = (),
        project: Optional["ProjectIndex"] = None,
    ) -> None:
        if stamp is None or self._refused is not None:
            return
        names = None if project is None else [self._add_name(word, project) for word in import_words]
        encoded = [_encode(d) for d in diagnostics]
        self._entries[os.path.abspath(display_name)] = [stamp.row, digest, rules_key, names, encoded]
        self._dirty = True

    def _add_name(self, word: str, project: "ProjectIndex") -> int:
        """The names row for what `word` names now, with the files' stamps now."""
        key = (word, tuple(self._add_row(path) for path in project.files_named((word,))))
        if key not in self._new_names:
            self._new_names[key] = len(self._names)
            self._names.append([word, list(key[1])])
        return self._new_names[key]

    def _add_row(self, path: str) -> int:
        """The stamp table's row for the file as it is now."""
        row = (path, *self._stamp_now(path))
        if row not in self._new_rows:
            self._new_rows[row] = len(self._stamps)
            self._stamps.append(list(row))
        return self._new_rows[row]

    def summary_store(self) -> Optional["SummaryFolder"]:
        """Where this run reads and keeps module summaries (ProjectIndex.use_store): the same
        folder, under the same key; None when the cache is not used this run or cannot be written."""
        return None if self._refused is not None else SummaryFolder.open(self.directory)

    def save(self) -> Optional[str]:
        """Write the cache atomically; returns why it could not be written (or was not used at
        all), if so."""
        if self._refused is not None:
            return self._refused
        if not self._dirty:
            return None
        try:
            self._write()
        except _Refused as refusal:
            return str(refusal)
        except OSError as exc:
            return f"cannot write cache in {self.directory}: {exc.strerror or exc}"
        self._dirty = False
        return None

    def _write(self) -> None:
        with _writable_version_folder(self.directory) as (version, owner):
            content = self._compacted(owner)
            _write_file(version, self.path.name, json.dumps(content, separators=(",", ":")).encode())

    def _compacted(self, owner: str) -> dict:
        """The file's content: each distinct stamp and names row once, only those an entry still
        refers to; malformed entries are left out."""
        self._parse_rows()
        rows: dict[tuple, int] = {}  # (path, *stamp) -> its index in the file
        names: dict[tuple, int] = {}  # (word, stamp rows in the file) -> its index in the file
        renumbered: dict[int, int] = {}
        entries = {}
        for path, entry in self._entries.items():
            if type(entry) is not list or len(entry) != _ENTRY_LENGTH:
                continue
            if entry[_NAMES] is not None:
                indices = self._renumber(entry[_NAMES], renumbered, rows, names)
                if indices is None:
                    continue
                entry = [*entry[:_NAMES], indices, *entry[_NAMES + 1:]]
            entries[path] = entry
        return {
            "format": _FORMAT,
            "owner": owner,
            "stamps": [list(row) for row in rows],
            "names": [[word, list(indices)] for word, indices in names],
            "entries": entries,
        }

    def _renumber(self, indices, renumbered: dict[int, int], rows: dict, names: dict) -> Optional[list[int]]:
        """An entry's names rows as indices into the tables being written; None if malformed."""
        if type(indices) is not list:
            return None
        result = []
        for index in indices:
            if type(index) is not int:
                return None
            if index not in renumbered:
                parsed = self._parsed_names[index] if 0 <= index < len(self._names) else None
                if parsed is None:
                    return None
                word, own_rows, _ = parsed
                key = (word, tuple(rows.setdefault(tuple(self._stamps[i]), len(rows)) for i in own_rows))
                renumbered[index] = names.setdefault(key, len(names))
            result.append(renumbered[index])
        return result


def _tables(data: bytes, owner: Optional[str]) -> Optional[tuple[dict[str, list], list, list]]:
    """The tables of a cache file this folder's key vouches for; None for anything else."""
    if owner is None or not data:
        return None
    try:
        content = json.loads(data)
    except (ValueError, RecursionError):  # damaged (or not UTF-8), or nested beyond the parser
        return None
    if type(content) is not dict or content.get("format") != _FORMAT or content.get("owner") != owner:
        return None
    entries, stamps, names = content.get("entries"), content.get("stamps"), content.get("names")
    if not (type(entries) is dict and type(stamps) is list and type(names) is list):
        return None
    return entries, stamps, names


# -- module summaries ---------------------------------------------------------------------------
# `.ddplint_cache/<version>/summaries/<name>.json`, one file per (kind, module content): each run
# (and each worker of a pool) adds the summaries it works out, and a run reads only those of the
# modules it needs. An entry is {"format", "version", "owner": the folder's token, "kind",
# "content": the module's content hash, "value": the analysis layer's JSON}; one whose fields
# are not all this run's own is a miss, and the module is summarised again.
SUMMARY_FOLDER_NAME = "summaries"
_SUMMARY_FORMAT = 1
# Entries of modules that were edited or deleted are never read again; without pruning they pile
# up, one file per content a module ever had. An entry used (read or written) has its time set to
# now, so entry times say when a run last used each. A run that added entries (the folder's time
# moved while it ran) and leaves more than MAX_SUMMARY_ENTRIES removes the longest unused down to
# PRUNED_SUMMARY_ENTRIES, never one used since the run began: a project whose live entries exceed
# the bound keeps them all, and only a run that grew the folder pays for listing it.
MAX_SUMMARY_ENTRIES = 10_000
PRUNED_SUMMARY_ENTRIES = 8_000
# File systems stamp times from a coarse clock (a few ms behind; two seconds on FAT): an entry
# used just after the run began can carry a time a little before it.
_CLOCK_SLACK_NS = 2 * 10**9


class SummaryFolder:
    """The results cache folder's module summaries (analysis/project.py's SummaryStore). The
    values are opaque JSON to this module; the analysis layer decodes them strictly."""

    def __init__(self, folder: "_Folder", owner: str) -> None:
        self._folder, self._owner = folder, owner
        self._opened_ns = time.time_ns()
        self._folder_time = _folder_time(folder)

    @classmethod
    def open(cls, directory: Path) -> Optional["SummaryFolder"]:
        """The folder, made (with the cache folder's key) if missing; None where a link, a file
        in its place or the file system stands in the way: the run summarises without it."""
        try:
            with _writable_version_folder(directory) as (version, owner):
                version.make_folder(SUMMARY_FOLDER_NAME)
                folder = _Folder.open(version.path / SUMMARY_FOLDER_NAME, version)
        except (_Refused, OSError):
            return None
        try:
            _remove_left_temporaries(folder)
        except OSError:
            pass
        return cls(folder, owner)

    def close(self) -> None:
        """Prunes the entries no recent run used (MAX_SUMMARY_ENTRIES), if this run added any."""
        try:
            if _folder_time(self._folder) != self._folder_time:
                _prune_unused(self._folder, self._opened_ns)
        except OSError:  # pruning is housekeeping: the next run tries again
            pass
        finally:
            self._folder.__exit__()

    def _entry(self, kind: str, data: bytes) -> tuple[str, str]:
        """(file name, content hash) of an entry."""
        digest = content_hash(data)
        return blake2b(f"{kind}\0{digest}".encode(), digest_size=16).hexdigest() + ".json", digest

    def load(self, kind: str, data: bytes) -> Any:
        name, digest = self._entry(kind, data)
        try:
            stored = _read_file(self._folder, name)
            entry = json.loads(stored) if stored else None
        except (OSError, ValueError, RecursionError):
            return None
        expected = {"format": _SUMMARY_FORMAT, "version": __version__, "owner": self._owner, "kind": kind, "content": digest}
        if type(entry) is not dict or set(entry) != {*expected, "value"}:
            return None
        if any(type(entry[key]) is not type(value) or entry[key] != value for key, value in expected.items()):
            return None
        self._folder.touch(name)  # used: kept when the folder is pruned
        return entry["value"]

    def save(self, kind: str, data: bytes, value: Any) -> None:
        name, digest = self._entry(kind, data)
        entry = {"format": _SUMMARY_FORMAT, "version": __version__, "owner": self._owner, "kind": kind,
                 "content": digest, "value": value}
        try:
            _write_file(self._folder, name, json.dumps(entry, separators=(",", ":")).encode())
        except (OSError, ValueError, TypeError):  # a full disk costs the next run a summary, never a result
            pass


def _folder_time(folder: "_Folder") -> int:
    """When an entry was last added to or removed from the folder."""
    return os.stat(folder.fd).st_mtime_ns if folder.fd is not None else os.stat(folder.path).st_mtime_ns


def _prune_unused(folder: "_Folder", used_since_ns: int) -> None:
    """Over MAX_SUMMARY_ENTRIES entries: the least recently used removed down to
    PRUNED_SUMMARY_ENTRIES, none used since `used_since_ns` (this run's own)."""
    names = [name for name in folder.names() if name.endswith(".json")]
    if len(names) <= MAX_SUMMARY_ENTRIES:
        return
    times = []
    for name in names:
        try:
            times.append((folder.lstat(name).st_mtime_ns, name))
        except OSError:  # removed meanwhile (another run pruning)
            continue
    times.sort()
    for used_ns, name in times[: max(0, len(times) - PRUNED_SUMMARY_ENTRIES)]:
        if used_ns >= used_since_ns - _CLOCK_SLACK_NS:
            break
        try:
            folder.remove(name)
        except OSError:
            pass


# -- the cache folder ---------------------------------------------------------------------------
class _Refused(Exception):
    """The cache cannot be used safely this run; the message says why."""


class _Folder:
    """A folder of the cache, opened without following a link to it, and what lies in it reached
    through that handle with O_NOFOLLOW: a link planted in the cache folder is never followed."""

    def __init__(self, path: Path, fd: Optional[int]):
        self.path, self.fd = path, fd

    @classmethod
    def open(cls, path: Path, parent: Optional["_Folder"] = None) -> "_Folder":
        """`path` (inside `parent`, if given). A link raises _Refused; something that is not a
        folder NotADirectoryError."""
        where, dir_fd = (path.name, parent.fd) if parent is not None and parent.fd is not None else (str(path), None)
        if _RELATIVE:
            try:
                return cls(path, os.open(where, os.O_RDONLY | _DIRECTORY | _NOFOLLOW, dir_fd=dir_fd))
            except OSError:
                if os.path.islink(path):
                    raise _Refused(_link_refused(path)) from None
                raise
        if stat.S_ISLNK(os.lstat(path).st_mode):  # FileNotFoundError if nothing is there
            raise _Refused(_link_refused(path))
        if not os.path.isdir(path):
            raise NotADirectoryError(errno.ENOTDIR, "not a folder", str(path))
        return cls(path, None)

    def __enter__(self) -> "_Folder":
        return self

    def __exit__(self, *exc_info) -> None:
        if self.fd is not None:
            os.close(self.fd)

    def _at(self, name: str) -> tuple[str, Optional[int]]:
        return (name, self.fd) if self.fd is not None else (str(self.path / name), None)

    def open_file(self, name: str, flags: int, mode: int = 0o666) -> int:
        where, dir_fd = self._at(name)
        if dir_fd is None and os.path.islink(where):
            raise OSError(errno.ELOOP, "a symbolic link", where)
        return os.open(where, flags | _NOFOLLOW, mode, dir_fd=dir_fd)

    def lstat(self, name: str) -> os.stat_result:
        where, dir_fd = self._at(name)
        return os.stat(where, dir_fd=dir_fd, follow_symlinks=False)

    def remove(self, name: str) -> None:
        """Removes `name`, a folder with all it holds (never through a link)."""
        where, dir_fd = self._at(name)
        if stat.S_ISDIR(self.lstat(name).st_mode):
            import shutil

            shutil.rmtree(self.path / name)  # rmtree follows no link inside
        else:
            os.unlink(where, dir_fd=dir_fd)

    def replace(self, source: str, target: str) -> None:
        (source_at, dir_fd), (target_at, _) = self._at(source), self._at(target)
        os.replace(source_at, target_at, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)

    def names(self) -> list[str]:
        return os.listdir(self.fd if self.fd is not None else self.path)

    def touch(self, name: str) -> None:
        """Sets the file's times to now (never through a link); failures are ignored."""
        where, dir_fd = self._at(name)
        try:
            os.utime(where, dir_fd=dir_fd, follow_symlinks=False)
        except (OSError, NotImplementedError):  # os.utime raises the latter where a platform lacks dir_fd
            pass  # an entry whose time stays old is only pruned sooner: never a wrong result

    def make_folder(self, name: str) -> None:
        where, dir_fd = self._at(name)
        try:
            os.mkdir(where, dir_fd=dir_fd)
        except FileExistsError:
            pass


def _link_refused(path: Path) -> str:
    return f"not using the cache: {path} is a symbolic link (ddplint follows none in its cache)"


def _read_file(folder: _Folder, name: str) -> Optional[bytes]:
    """A regular file's bytes, b"" for anything else there (damage, a link), None if nothing is."""
    try:
        handle = folder.open_file(name, os.O_RDONLY)
    except FileNotFoundError:
        return None
    except OSError:  # a link (ELOOP), unreadable
        return b""
    try:
        info = os.fstat(handle)
        if not stat.S_ISREG(info.st_mode) or info.st_size > _MAX_CACHE_BYTES:
            return b""
        chunks = []
        while chunk := os.read(handle, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        return b""
    finally:
        os.close(handle)


def _write_file(folder: _Folder, name: str, data: bytes) -> None:
    """`data` as `name`, whole or not at all: written under a temporary name of this process's
    own, then renamed over it (two runs at once: the last complete write wins). The temporary
    file is removed if anything fails."""
    from ddplint.leftovers import owned_name

    temporary = f"{owned_name(_TEMPORARY_PREFIX)}{os.urandom(4).hex()}.tmp"
    handle = folder.open_file(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(handle, view):]
        finally:
            os.close(handle)
        _clear_way(folder, name)
        folder.replace(temporary, name)
    except BaseException:
        try:
            folder.remove(temporary)
        except OSError:
            pass
        raise


def _clear_way(folder: _Folder, name: str) -> None:
    """Removes a folder where the file `name` goes (a rename cannot replace one)."""
    try:
        if stat.S_ISDIR(folder.lstat(name).st_mode):
            folder.remove(name)
    except FileNotFoundError:
        pass


def _remove_left_temporaries(folder: _Folder) -> None:
    """The temporary files of runs killed while they saved."""
    from ddplint.leftovers import left_by_dead_process

    for name in folder.names():
        if name.endswith(".tmp") and left_by_dead_process(name, _TEMPORARY_PREFIX):
            try:
                folder.remove(name)
            except OSError:
                pass


@contextmanager
def _writable_version_folder(directory: Path) -> Iterator[tuple[_Folder, str]]:
    """(this version's folder, the folder's token) for writing: the cache folder made if missing
    (the folders above it are the user's to link), marked, given a key if it has none; this
    version's folder made, and cleared of the temporary files of killed runs."""
    directory.mkdir(parents=True, exist_ok=True)
    with _Folder.open(directory) as root:
        _mark(root)
        owner = _owner(root) or _new_key(root)
        with _version_folder(root, directory / __version__) as version:
            root.touch(__version__)  # in use: see _remove_old_versions
            _remove_old_versions(root)
            _remove_left_temporaries(version)
            yield version, owner


# An upgrade leaves the previous version's folder behind, never to be read again by this version.
# A folder named like a version other than this one is removed once no run of it has written to
# the cache for OLD_VERSION_DAYS (each write sets its folder's time): two versions in use side by
# side (an editor's and pre-commit's) both keep theirs.
OLD_VERSION_DAYS = 30
_VERSION_NAME = re.compile(r"[0-9]+\.[0-9]+(?:[.+-]?[A-Za-z0-9]+)*\Z")


def _remove_old_versions(root: _Folder) -> None:
    cutoff_ns = time.time_ns() - OLD_VERSION_DAYS * 24 * 3600 * 10**9
    for name in root.names():
        if name == __version__ or not _VERSION_NAME.match(name):
            continue
        try:
            info = root.lstat(name)
            if stat.S_ISDIR(info.st_mode) and info.st_mtime_ns < cutoff_ns:
                root.remove(name)
        except OSError:  # removed meanwhile, or not ours to remove: left alone
            pass


def _version_folder(root: _Folder, path: Path) -> _Folder:
    """This version's folder, made if missing; a file in its place is replaced."""
    root.make_folder(path.name)
    try:
        return _Folder.open(path, root)
    except NotADirectoryError:
        root.remove(path.name)
        root.make_folder(path.name)
        return _Folder.open(path, root)


def _owner(root: _Folder) -> Optional[str]:
    """The token of the folder's key: from its random bytes and from the key file's device,
    inode and ctime. None without a usable key (none yet, damaged, or being written)."""
    try:
        handle = root.open_file(KEY_NAME, os.O_RDONLY)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP or os.path.islink(root.path / KEY_NAME):
            raise _Refused(_link_refused(root.path / KEY_NAME)) from None
        raise _Refused(f"not using the cache: cannot read {root.path / KEY_NAME}: {exc.strerror or exc}") from None
    try:
        info = os.fstat(handle)
        secret = os.read(handle, _KEY_LENGTH + 1) if stat.S_ISREG(info.st_mode) else b""
    finally:
        os.close(handle)
    if len(secret) != _KEY_LENGTH:
        return None
    where = f"{info.st_dev}:{info.st_ino}:{info.st_ctime_ns}".encode()
    return blake2b(where, key=secret, digest_size=16).hexdigest()


def _new_key(root: _Folder) -> str:
    """A new key in place of what is there (nothing, or a damaged one), and its token. Two runs
    at once may each write one: each takes the token of the key there when it reads it back, and a
    file written with a token that is no longer the folder's is discarded and rewritten."""
    try:
        root.remove(KEY_NAME)
    except FileNotFoundError:
        pass
    try:
        handle = root.open_file(KEY_NAME, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        pass  # another run made one meanwhile
    else:
        try:
            os.write(handle, os.urandom(_KEY_LENGTH // 2).hex().encode())
        finally:
            os.close(handle)
    owner = _owner(root)
    if owner is None:
        raise OSError(errno.EIO, f"{root.path / KEY_NAME} could not be written")
    return owner


def _mark(root: _Folder) -> None:
    """Keeps the cache out of commits and backups, like ruff and pytest do. Made only where
    nothing is (O_EXCL: never through a link); what is there is left alone."""
    for name, text in ((".gitignore", "# Created by ddplint.\n*\n"),
                       ("CACHEDIR.TAG", "Signature: 8a477f597d28d172789f06886806bc55\n# ddplint cache\n")):
        try:
            handle = root.open_file(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
        except FileExistsError:
            continue
        try:
            os.write(handle, text.encode())
        finally:
            os.close(handle)


def _tracked_by_git(directory: Path) -> bool:
    """Whether git tracks files in `directory` (an absolute path): read from the index of the work
    tree it is in, without running git (a repository's configuration can make git run commands).
    Indexes of version 2 and 3 hold each path whole; version 4 ones (`feature.manyFiles`) drop
    the part a path shares with the one before, so there only the end of the folder's name is
    looked for."""
    for root in directory.parents:
        dot_git = root / ".git"
        try:
            if os.path.isfile(dot_git):  # a linked work tree or a submodule: "gitdir: <path>"
                with open(dot_git, encoding="utf-8", errors="replace") as handle:
                    line = handle.read(4096).strip()
                git_dir = root / line[len("gitdir:"):].strip() if line.startswith("gitdir:") else None
            else:
                git_dir = dot_git if os.path.isdir(dot_git) else None
            if git_dir is None:
                continue
            with open(git_dir / "index", "rb") as handle:
                index = handle.read(_MAX_INDEX_BYTES)
        except OSError:
            return False
        if index[:4] != b"DIRC":
            return False
        relative = directory.relative_to(root).as_posix().encode()
        whole = int.from_bytes(index[4:8], "big") < 4
        name = directory.name
        return (relative if whole else name[min(3, len(name) // 2):].encode()) + b"/" in index
    return False


# -- findings as the file keeps them ------------------------------------------------------------
def _encode(d: Diagnostic) -> dict:
    return {
        "code": d.code,
        "message": d.message,
        "location": [d.location.row, d.location.column],
        "end": [d.end_location.row, d.end_location.column],
        "severity": d.severity,
        "cell": d.cell,
        "explanation": d.explanation,
        "fix": None
        if d.fix is None
        else {
            "message": d.fix.message,
            "applicability": d.fix.applicability,
            "edits": [[e.content, [e.location.row, e.location.column], [e.end_location.row, e.end_location.column]] for e in d.fix.edits],
        },
    }


def _decode(items, filename: str) -> Optional[list[Diagnostic]]:
    """None (a cache miss) for anything that is not exactly what `_encode` wrote, down to the type
    of every value. Entries are kept by absolute path; findings carry the name the file was
    given by on this run."""
    if type(items) is not list:
        return None
    try:
        return [_decode_one(item, filename) for item in items]
    except (KeyError, TypeError, ValueError):
        return None


def _decode_one(item, filename: str) -> Diagnostic:
    if type(item) is not dict:
        raise TypeError("not an object")
    cell, fix, explanation = item["cell"], item["fix"], item["explanation"]
    if cell is not None and type(cell) is not int:
        raise TypeError("cell")
    return Diagnostic(
        code=_text(item["code"]),
        message=_text(item["message"]),
        filename=filename,
        location=_location(item["location"]),
        end_location=_location(item["end"]),
        severity=Severity(_text(item["severity"])),
        cell=cell,
        fix=None if fix is None else _decode_fix(fix),
        explanation=None if explanation is None else _text(explanation),
    )


def _decode_fix(item) -> Fix:
    if type(item) is not dict or type(item["edits"]) is not list:
        raise TypeError("fix")
    edits = []
    for edit in item["edits"]:
        if type(edit) is not list or len(edit) != 3:
            raise TypeError("edit")
        edits.append(Edit(_text(edit[0]), _location(edit[1]), _location(edit[2])))
    return Fix(_text(item["message"]), tuple(edits), Applicability(_text(item["applicability"])))


def _text(value) -> str:
    if type(value) is not str:
        raise TypeError("not a string")
    return value


def _location(value) -> Location:
    if type(value) is not list or len(value) != 2 or type(value[0]) is not int or type(value[1]) is not int:
        raise TypeError("not a location")
    return Location(value[0], value[1])
