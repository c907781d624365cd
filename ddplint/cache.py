"""Results of earlier runs, so that a second run over unchanged files parses nothing.

One JSON file per (ddplint version, settings) under `.ddplint_cache/`. An entry is trusted when the
file's size and mtime are unchanged (no read at all, as ruff does) or, failing that, when the
content hash matches (a `touch` or a fresh checkout costs a read and a hash, not a parse). JSON, not
pickle: a cache directory can come from anywhere (a shared checkout, an archive), and loading it must
never run code.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Sequence

from ddplint import __version__
from ddplint.diagnostics import Diagnostic, Edit, Fix, Location

if TYPE_CHECKING:
    from ddplint.analysis.project import ProjectIndex

CACHE_DIR_NAME = ".ddplint_cache"
_PROJECT_MARKERS = ("pyproject.toml", "ddplint.toml", ".git")


def content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


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


# The file's layout: {"format": _FORMAT, "stamps": [[path, size, mtime_ns], ...], "imports":
# [[import words, stamp indices], ...], "entries": {absolute path: [size, mtime_ns, hash, rules,
# imports index or null, diagnostics]}}. A project file's stamp is written once, however many
# files import it (it was 90 % of the torch package's cache, per entry). Any other content, such as
# an older layout, reads as an empty cache.
_FORMAT = 2


class ResultCache:
    """Diagnostics per file, valid for one ddplint version and one set of settings (`settings_key`:
    anything that changes results, such as the selected rules and the config)."""

    def __init__(self, directory: Path, settings_key: str):
        self.directory = directory
        digest = hashlib.blake2b(f"{__version__}\0{settings_key}".encode(), digest_size=8).hexdigest()
        self.path = directory / __version__ / f"{digest}.json"
        self._entries, self._stamps, self._imports = self._load()
        self._file_stamps: dict[str, tuple[int, int]] = {}  # path -> [size, mtime_ns] now: stat once per run
        self._groups: dict[int, Optional[_Imports]] = {}  # imports index -> what it says, checked once
        self._dirty = False

    def _load(self) -> tuple[dict[str, list], list, list]:
        try:
            content = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}, [], []  # no cache yet, or a damaged one: start afresh
        if not isinstance(content, dict) or content.get("format") != _FORMAT:
            return {}, [], []  # another layout: start afresh
        entries, stamps, imports = content.get("entries"), content.get("stamps"), content.get("imports")
        if not (isinstance(entries, dict) and isinstance(stamps, list) and isinstance(imports, list)):
            return {}, [], []
        return entries, stamps, imports

    def _valid_entry(
        self, display_name: str, rules_key: str, project: Optional["ProjectIndex"]
    ) -> Optional[tuple[list, Optional["_Imports"]]]:
        """The file's entry (and what it imports) if it was made with these rules and its imported
        project files are unchanged; whether the file itself is unchanged is the caller's question
        (stamp or hash). Anything malformed is a miss."""
        entry = self._entries.get(os.path.abspath(display_name))
        if type(entry) is not list or len(entry) != 6 or entry[3] != rules_key:
            return None
        index = entry[4]
        if index is None or project is None:  # stored without a project index: valid only without one
            return (entry, None) if index is None and project is None else None
        imports = self._group(index)
        if imports is None or not imports.current:
            return None
        # The same files named now (none added under an imported name, none gone).
        return (entry, imports) if project.files_named(imports.words, exclude=display_name) == imports.paths else None

    def _group(self, index) -> Optional["_Imports"]:
        """An imports record, its stamps compared with the files' once per run (most files of a
        large project import the same few names)."""
        if type(index) is not int:
            return None
        if index not in self._groups:
            stored = self._stored_group(index)
            if stored is not None:
                now = all(stamp == self._stamp_now(path) for path, stamp in zip(stored.paths, stored.stamps))
                stored = replace(stored, current=now)
            self._groups[index] = stored
        return self._groups[index]

    def _stored_group(self, index) -> Optional["_Imports"]:
        """An imports record as stored (without reading the files' stamps); None if malformed."""
        if type(index) is not int or not 0 <= index < len(self._imports):
            return None
        return _parse_group(self._imports[index], self._stamps)

    def _stamp_now(self, path: str) -> tuple[int, int]:
        if path not in self._file_stamps:
            stamp = FileStamp.of(path)
            self._file_stamps[path] = (stamp.size, stamp.mtime_ns) if stamp else (-1, -1)
        return self._file_stamps[path]

    def by_stamp(
        self, display_name: str, stamp: Optional[FileStamp], rules_key: str, project: Optional["ProjectIndex"] = None
    ) -> Optional[list[Diagnostic]]:
        found = self._valid_entry(display_name, rules_key, project)
        if found is None or stamp is None or found[0][0] != stamp.size or found[0][1] != stamp.mtime_ns:
            return None
        return _decode(found[0][5], display_name)

    def known_hash(
        self, display_name: str, rules_key: str, project: Optional["ProjectIndex"] = None
    ) -> Optional[str]:
        """The content hash of a still-valid entry: a worker that finds the same hash skips the file."""
        found = self._valid_entry(display_name, rules_key, project)
        return found[0][2] if found is not None and isinstance(found[0][2], str) else None

    def by_content(
        self,
        display_name: str,
        digest: str,
        stamp: Optional[FileStamp],
        rules_key: str,
        project: Optional["ProjectIndex"] = None,
    ) -> Optional[list[Diagnostic]]:
        found = self._valid_entry(display_name, rules_key, project)
        if found is None or found[0][2] != digest:
            return None
        entry, imports = found
        diagnostics = _decode(entry[5], display_name)
        if diagnostics is not None and stamp is not None:  # remember the new stamp
            words = imports.words if imports is not None else ()
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
        index = None
        if project is not None:
            paths = project.files_named(import_words, exclude=display_name)
            index = len(self._imports)  # a new record; `save` merges the equal ones
            self._stamps.extend([path, *self._stamp_now(path)] for path in paths)
            self._imports.append([list(import_words), list(range(len(self._stamps) - len(paths), len(self._stamps)))])
        encoded = [_encode(d) for d in diagnostics]
        self._entries[os.path.abspath(display_name)] = [stamp.size, stamp.mtime_ns, digest, rules_key, index, encoded]
        self._dirty = True

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
        """The file's content: each distinct stamp and imports record once, only those an entry
        still refers to; malformed entries are left out."""
        stamps: dict[tuple, int] = {}  # (path, size, mtime_ns) -> index
        records: dict[tuple, int] = {}  # (words, stamp indices) -> index
        renumbered: dict[int, Optional[int]] = {}
        entries = {}
        for path, entry in self._entries.items():
            if type(entry) is not list or len(entry) != 6:
                continue
            index = entry[4]
            if index is not None:
                if type(index) is not int:
                    continue
                if index not in renumbered:
                    renumbered[index] = _intern_group(self._stored_group(index), stamps, records)
                if renumbered[index] is None:
                    continue
            entries[path] = [*entry[:4], None if index is None else renumbered[index], entry[5]]
        return {
            "format": _FORMAT,
            "stamps": [list(key) for key in stamps],
            "imports": [[list(words), list(indices)] for words, indices in records],
            "entries": entries,
        }

    def _mark_directory(self) -> None:
        # Keep the cache out of commits and backups, like ruff and pytest do.
        gitignore = self.directory / ".gitignore"
        if not gitignore.exists():
            gitignore.write_text("# Created by ddplint.\n*\n", encoding="utf-8")
        tag = self.directory / "CACHEDIR.TAG"
        if not tag.exists():
            tag.write_text("Signature: 8a477f597d28d172789f06886806bc55\n# ddplint cache\n", encoding="utf-8")


@dataclass(frozen=True)
class _Imports:
    """What a cached result depends on besides its own file: the project files its import words
    named when it was stored, with their stamps then, and whether those stamps are still current."""

    words: tuple[str, ...]
    paths: tuple[str, ...]
    stamps: tuple[tuple[int, int], ...]
    current: bool = False


def _parse_group(record, stamps: list) -> Optional[_Imports]:
    """An imports record of the file as stored (`current` not yet known); None if malformed."""
    try:
        words, indices = record
        if type(words) is not list or type(indices) is not list or not all(type(w) is str for w in words):
            return None
        rows = [stamps[i] for i in indices if type(i) is int and i >= 0]
        if len(rows) != len(indices):
            return None
        paths = tuple(path for path, _, _ in rows)
        times = tuple((size, mtime_ns) for _, size, mtime_ns in rows)
    except (TypeError, ValueError, IndexError):
        return None
    if not all(type(p) is str for p in paths) or not all(type(n) is int for stamp in times for n in stamp):
        return None
    return _Imports(tuple(words), paths, times)


def _intern_group(imports: Optional[_Imports], stamps: dict[tuple, int], records: dict[tuple, int]) -> Optional[int]:
    """The record's index in the tables being written, adding it (and its stamps) if new."""
    if imports is None:
        return None
    indices = tuple(
        stamps.setdefault((path, *stamp), len(stamps)) for path, stamp in zip(imports.paths, imports.stamps)
    )
    return records.setdefault((imports.words, indices), len(records))


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
