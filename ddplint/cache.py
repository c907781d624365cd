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
from dataclasses import dataclass
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


class ResultCache:
    """Diagnostics per file, valid for one ddplint version and one set of settings (`settings_key`:
    anything that changes results, such as the selected rules and the config)."""

    def __init__(self, directory: Path, settings_key: str):
        self.directory = directory
        digest = hashlib.blake2b(f"{__version__}\0{settings_key}".encode(), digest_size=8).hexdigest()
        self.path = directory / __version__ / f"{digest}.json"
        self._entries: dict[str, dict] = self._load()
        self._stamp_memo: dict[str, list[int]] = {}
        self._dirty = False

    def _load(self) -> dict[str, dict]:
        try:
            entries = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}  # no cache yet, or a damaged one: start afresh
        return entries if isinstance(entries, dict) else {}

    def _valid_entry(self, display_name: str, rules_key: str, project: Optional["ProjectIndex"]) -> Optional[dict]:
        """The file's entry if it was made with these rules and its imported project files are
        unchanged; whether the file itself is unchanged is the caller's question (stamp or hash)."""
        entry = self._entries.get(os.path.abspath(display_name))
        if entry is None or entry.get("rules") != rules_key:
            return None
        return entry if _imports_unchanged(entry, display_name, project, self._stamp_memo) else None

    def by_stamp(
        self, display_name: str, stamp: Optional[FileStamp], rules_key: str, project: Optional["ProjectIndex"] = None
    ) -> Optional[list[Diagnostic]]:
        entry = self._valid_entry(display_name, rules_key, project)
        if entry is None or stamp is None or entry.get("size") != stamp.size or entry.get("mtime_ns") != stamp.mtime_ns:
            return None
        return _decode(entry.get("diagnostics"), display_name)

    def known_hash(
        self, display_name: str, rules_key: str, project: Optional["ProjectIndex"] = None
    ) -> Optional[str]:
        """The content hash of a still-valid entry: a worker that finds the same hash skips the file."""
        entry = self._valid_entry(display_name, rules_key, project)
        return entry.get("hash") if entry is not None else None

    def by_content(
        self,
        display_name: str,
        digest: str,
        stamp: Optional[FileStamp],
        rules_key: str,
        project: Optional["ProjectIndex"] = None,
    ) -> Optional[list[Diagnostic]]:
        entry = self._valid_entry(display_name, rules_key, project)
        if entry is None or entry.get("hash") != digest:
            return None
        found = _decode(entry.get("diagnostics"), display_name)
        if found is not None and stamp is not None:  # remember the new stamp
            self.store(display_name, digest, stamp, rules_key, found, entry.get("import_words", ()), project)
        return found

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
        self._entries[os.path.abspath(display_name)] = {
            "size": stamp.size,
            "mtime_ns": stamp.mtime_ns,
            "hash": digest,
            "rules": rules_key,
            "diagnostics": [_encode(d) for d in diagnostics],
            "project": project is not None,
            "import_words": list(import_words),
            "imports": _stamps(project.files_named(import_words, exclude=display_name)) if project is not None else {},
        }
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
                json.dump(self._entries, out, separators=(",", ":"))
            os.replace(temporary, self.path)  # two runs at once: the last complete write wins
        except OSError as exc:
            return f"cannot write cache in {self.directory}: {exc.strerror or exc}"
        self._dirty = False
        return None

    def _mark_directory(self) -> None:
        # Keep the cache out of commits and backups, like ruff and pytest do.
        gitignore = self.directory / ".gitignore"
        if not gitignore.exists():
            gitignore.write_text("# Created by ddplint.\n*\n", encoding="utf-8")
        tag = self.directory / "CACHEDIR.TAG"
        if not tag.exists():
            tag.write_text("Signature: 8a477f597d28d172789f06886806bc55\n# ddplint cache\n", encoding="utf-8")


def _imports_unchanged(entry: dict, display_name: str, project: Optional["ProjectIndex"], memo: dict) -> bool:
    """With cross-module flow a result also depends on the project files the file imports: the
    same files (none added under an imported name) with the same stamps."""
    if entry.get("project") != (project is not None):
        return False
    if project is None:
        return True
    recorded = entry.get("imports")
    current = project.files_named(entry.get("import_words") or (), exclude=display_name)
    return isinstance(recorded, dict) and sorted(recorded) == current and _stamps(current, memo) == recorded


def _stamps(paths: Sequence[str], memo: Optional[dict] = None) -> dict[str, list[int]]:
    """Size and mtime of each path. `memo` (one per cache, i.e. per run): in a large project most
    files import the same few modules."""
    memo = {} if memo is None else memo
    for path in paths:
        if path not in memo:
            stamp = FileStamp.of(path)
            memo[path] = [stamp.size, stamp.mtime_ns] if stamp else [-1, -1]
    return {path: memo[path] for path in paths}


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
