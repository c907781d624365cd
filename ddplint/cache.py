"""Results of earlier runs, so that a second run over unchanged files parses nothing.

One JSON file per (ddplint version, settings) under `.ddplint_cache/`. An entry is trusted when the
file's size and mtime are unchanged (no read at all, as ruff does) or, failing that, when the
content hash matches (a `touch` or a fresh checkout costs a read and a hash, not a parse). JSON, not
pickle: a cache directory can come from anywhere (a shared checkout, an archive), and loading it must
never run code.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Sequence

try:  # hashlib's blake2b without hashlib, which loads OpenSSL for its other algorithms (~3 ms of a warm run)
    from _blake2 import blake2b
except ImportError:  # an interpreter without CPython's module
    from hashlib import blake2b

from ddplint import __version__
from ddplint.diagnostics import Diagnostic, Edit, Fix, Location

if TYPE_CHECKING:
    from ddplint.analysis.project import ProjectIndex

CACHE_DIR_NAME = ".ddplint_cache"
_PROJECT_MARKERS = ("pyproject.toml", "ddplint.toml", ".git")


def content_hash(data: bytes) -> str:
    return blake2b(data, digest_size=16).hexdigest()


def default_cache_dir(start: Optional[Path] = None) -> Path:
    """`.ddplint_cache` in the project root: the nearest folder, walking up from `start`, that holds
    a pyproject.toml, ddplint.toml or .git; the starting folder when there is none."""
    start = (start or Path.cwd()).resolve()
    for folder in (start, *start.parents):
        if any((folder / marker).exists() for marker in _PROJECT_MARKERS):
            return folder / CACHE_DIR_NAME
    return start / CACHE_DIR_NAME


@dataclass(frozen=True)
class FileStamp:
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, path: str) -> Optional["FileStamp"]:
        try:
            info = os.stat(path)
        except OSError:
            return None
        return cls(info.st_size, info.st_mtime_ns)


# The file's layout: {"format": _FORMAT,
#   "stamps": [[path, size, mtime_ns], ...]: each distinct stamp of a project file some entry imports,
#   "names": [[word, [stamp rows]], ...]: each distinct answer to "the project files an import word
#            names" (all of them, a file's own too, with their stamps then),
#   "entries": {absolute path: [size, mtime_ns, hash, rules, [names rows] (null: stored without a
#               project index), diagnostics]}}.
# A project file's stamp is written once however many files import it (written per entry, the
# stamps were 90 % of the torch package's cache, and loading them most of a warm run). Any other
# content, such as an older layout, reads as an empty cache.
_FORMAT = 2


class ResultCache:
    """Diagnostics per file, valid for one ddplint version and one set of settings (`settings_key`:
    anything that changes results, such as the selected rules and the config)."""

    def __init__(self, directory: Path, settings_key: str):
        self.directory = directory
        digest = blake2b(f"{__version__}\0{settings_key}".encode(), digest_size=8).hexdigest()
        self.path = directory / __version__ / f"{digest}.json"
        self._entries, self._stamps, self._names = self._load()
        self._file_stamps: dict[str, tuple[int, int]] = {}  # path -> (size, mtime_ns) now: stat once per run
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
        self._new_rows: dict[tuple[str, int, int], int] = {}
        self._new_names: dict[tuple[str, tuple[int, ...]], int] = {}
        self._dirty = False

    def _load(self) -> tuple[dict[str, list], list, list]:
        try:
            content = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}, [], []  # no cache yet, or a damaged one: start afresh
        if not isinstance(content, dict) or content.get("format") != _FORMAT:
            return {}, [], []  # another layout: start afresh
        entries, stamps, names = content.get("entries"), content.get("stamps"), content.get("names")
        if not (isinstance(entries, dict) and isinstance(stamps, list) and isinstance(names, list)):
            return {}, [], []
        return entries, stamps, names

    def _valid_entry(self, display_name: str, rules_key: str, project: Optional["ProjectIndex"]) -> Optional[list]:
        """The file's entry if it was made with these rules and the project files it imports are
        unchanged: for each import word, the same files (none added, none gone) with the same
        stamps. Whether the file itself is unchanged is the caller's question (stamp or hash).
        Anything malformed is a miss."""
        entry = self._entries.get(os.path.abspath(display_name))
        if type(entry) is not list or len(entry) != 6 or entry[3] != rules_key:
            return None
        names = entry[4]
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
            try:
                path, size, mtime_ns = self._stamps[index]
                well_formed = type(path) is str and path != "" and type(size) is int and type(mtime_ns) is int
            except (TypeError, ValueError):
                well_formed = False
            self._row_paths.append(path if well_formed else "")
            if not well_formed or self._stamp_now(path) != (size, mtime_ns):
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

    def _stamp_now(self, path: str) -> tuple[int, int]:
        if path not in self._file_stamps:
            try:
                info = os.stat(path)
                self._file_stamps[path] = (info.st_size, info.st_mtime_ns)
            except OSError:
                self._file_stamps[path] = (-1, -1)
        return self._file_stamps[path]

    def by_stamp(
        self, display_name: str, stamp: Optional[FileStamp], rules_key: str, project: Optional["ProjectIndex"] = None
    ) -> Optional[list[Diagnostic]]:
        entry = self._valid_entry(display_name, rules_key, project)
        if entry is None or stamp is None or entry[0] != stamp.size or entry[1] != stamp.mtime_ns:
            return None
        return _decode(entry[5], display_name)

    def known_hash(
        self, display_name: str, rules_key: str, project: Optional["ProjectIndex"] = None
    ) -> Optional[str]:
        """The content hash of a still-valid entry: a worker that finds the same hash skips the file."""
        entry = self._valid_entry(display_name, rules_key, project)
        return entry[2] if entry is not None and isinstance(entry[2], str) else None

    def by_content(
        self,
        display_name: str,
        digest: str,
        stamp: Optional[FileStamp],
        rules_key: str,
        project: Optional["ProjectIndex"] = None,
    ) -> Optional[list[Diagnostic]]:
        entry = self._valid_entry(display_name, rules_key, project)
        if entry is None or entry[2] != digest:
            return None
        diagnostics = _decode(entry[5], display_name)
        if diagnostics is not None and stamp is not None:  # remember the new stamp
            words = [self._names[int(index)][0] for index in entry[4] or ()]  # current, so well formed
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
        if stamp is None:
            return
        names = None if project is None else [self._add_name(word, project) for word in import_words]
        encoded = [_encode(d) for d in diagnostics]
        self._entries[os.path.abspath(display_name)] = [stamp.size, stamp.mtime_ns, digest, rules_key, names, encoded]
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

    def save(self) -> Optional[str]:
        """Write the cache atomically; returns why it could not be written, if it could not."""
        if not self._dirty:
            return None
        import tempfile  # here: a run that changes nothing never writes (nor imports it)

        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._mark_directory()
            handle, temporary = tempfile.mkstemp(dir=self.path.parent, suffix=".tmp")
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump(self._compacted(), out, separators=(",", ":"))
            os.replace(temporary, self.path)  # two runs at once: the last complete write wins
        except OSError as exc:
            return f"cannot write cache in {self.directory}: {exc.strerror or exc}"
        self._dirty = False
        return None

    def _compacted(self) -> dict:
        """The file's content: each distinct stamp and names row once, only those an entry still
        refers to; malformed entries are left out."""
        self._parse_rows()
        rows: dict[tuple, int] = {}  # (path, size, mtime_ns) -> its index in the file
        names: dict[tuple, int] = {}  # (word, stamp rows in the file) -> its index in the file
        renumbered: dict[int, int] = {}
        entries = {}
        for path, entry in self._entries.items():
            if type(entry) is not list or len(entry) != 6:
                continue
            if entry[4] is not None:
                indices = self._renumber(entry[4], renumbered, rows, names)
                if indices is None:
                    continue
                entry = [*entry[:4], indices, entry[5]]
            entries[path] = entry
        return {
            "format": _FORMAT,
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

    def _mark_directory(self) -> None:
        # Keep the cache out of commits and backups, like ruff and pytest do.
        gitignore = self.directory / ".gitignore"
        if not gitignore.exists():
            gitignore.write_text("# Created by ddplint.\n*\n", encoding="utf-8")
        tag = self.directory / "CACHEDIR.TAG"
        if not tag.exists():
            tag.write_text("Signature: 8a477f597d28d172789f06886806bc55\n# ddplint cache\n", encoding="utf-8")


def _encode(d: Diagnostic) -> dict:
    return {
        "code": d.code,
        "message": d.message,
        "location": [d.location.row, d.location.column],
        "end": [d.end_location.row, d.end_location.column],
        "severity": d.severity,
        "cell": d.cell,
        "fix": None
        if d.fix is None
        else {
            "message": d.fix.message,
            "applicability": d.fix.applicability,
            "edits": [[e.content, [e.location.row, e.location.column], [e.end_location.row, e.end_location.column]] for e in d.fix.edits],
        },
    }


def _decode(items, filename: str) -> Optional[list[Diagnostic]]:
    """None (a cache miss) for anything that is not exactly what `_encode` wrote. Entries are kept
    by absolute path; findings carry the name the file was given by on this run."""
    try:
        return [
            Diagnostic(
                code=item["code"],
                message=item["message"],
                filename=filename,
                location=Location(*item["location"]),
                end_location=Location(*item["end"]),
                severity=item["severity"],
                cell=item["cell"],
                fix=None if item["fix"] is None else _decode_fix(item["fix"]),
            )
            for item in items
        ]
    except (KeyError, TypeError, ValueError):
        return None


def _decode_fix(item: dict) -> Fix:
    edits = tuple(Edit(content, Location(*start), Location(*end)) for content, start, end in item["edits"])
    return Fix(item["message"], edits, item["applicability"])
