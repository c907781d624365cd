"""`.gitignore`, `.ignore` and git's global excludes, as a folder walk applies them (ruff's
`respect-gitignore`). Matching is `pathspec`'s implementation of git's wildmatch rules.

Which files count, nearest first (the first that says "ignored" or "not ignored" decides):
- `.ignore` then `.gitignore` in the directory of the path, then in each directory above it,
  up to the repository root (the nearest directory holding `.git`), or, outside a repository,
  up to the folder the walk started from;
- inside a repository, git's global excludes file: `core.excludesFile` from the user's git
  configuration, else `$XDG_CONFIG_HOME/git/ignore` (`~/.config/git/ignore`).

Git itself is never run (a repository's configuration can make git run commands): the user's
configuration file is read as text, and only `core.excludesFile` is taken from it.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Optional

from ddplint.source import read_file

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

# pathspec (~20 ms to import) is imported where an ignore file is read: a walk of a tree that has
# none, a warm run's usual case, never needs it.

# Per directory, the files that hold patterns for it, the stronger first (ripgrep's order).
IGNORE_FILES = (".ignore", ".gitignore")


class IgnoreRules:
    """Answers "is this path ignored?" for one walk; each ignore file is read once."""

    def __init__(self, walk_root: str) -> None:
        self._walk_root = os.path.abspath(walk_root)
        self._repository = _repository_root(self._walk_root)
        self._specs: dict[str, list[GitIgnoreSpec]] = {}
        self._chains: dict[str, list[tuple[str, list[GitIgnoreSpec]]]] = {}
        self._global = _read_spec(global_excludes_file()) if self._repository is not None else None

    def is_ignored(self, path: str, is_directory: bool) -> bool:
        absolute = os.path.abspath(path)
        boundary = self._repository or self._walk_root
        if not absolute.startswith(os.path.join(boundary, "")):
            return False  # the boundary itself, or outside it: no ignore file applies
        for directory, specs in self._applying(os.path.dirname(absolute), boundary):
            verdict = _verdict(specs, _relative(absolute, directory, is_directory))
            if verdict is not None:
                return verdict
        if self._global is not None and self._repository is not None:  # read only inside a repository
            return bool(self._global.check_file(_relative(absolute, self._repository, is_directory)).include)
        return False

    def _applying(self, directory: str, boundary: str) -> list[tuple[str, list[GitIgnoreSpec]]]:
        """The directories from `directory` up to `boundary` that hold ignore files, nearest
        first, with their patterns: worked out once per directory (a walk asks for every file,
        and most trees have one ignore file or none: nothing left to ask per file)."""
        unanswered = []  # a loop, not recursion: a tree can be 1,000 folders deep
        while directory not in self._chains:
            unanswered.append(directory)
            if directory == boundary:
                break
            directory = os.path.dirname(directory)
        chain = self._chains.get(directory, [])
        for below in reversed(unanswered):
            specs = self._specs_in(below)
            chain = self._chains[below] = [(below, specs), *chain] if specs else chain
        return chain

    def _specs_in(self, directory: str) -> list[GitIgnoreSpec]:
        specs = self._specs.get(directory)
        if specs is None:
            specs = self._specs[directory] = [
                spec for spec in (_read_spec(os.path.join(directory, name)) for name in IGNORE_FILES) if spec is not None
            ]
        return specs


def _verdict(specs: list[GitIgnoreSpec], relative: str) -> Optional[bool]:
    """The first of a directory's ignore files that says anything about `relative` decides."""
    for spec in specs:
        include = spec.check_file(relative).include
        if include is not None:
            return include
    return None


def _relative(absolute: str, directory: str, is_directory: bool) -> str:
    """`absolute` (below `directory`, both absolute) relative to it, with `/` separators."""
    relative = absolute[len(os.path.join(directory, "")):].replace(os.sep, "/")
    return relative + "/" if is_directory else relative  # `name/` patterns match directories only


def _read_spec(path: str) -> Optional[GitIgnoreSpec]:
    """The patterns of one ignore file; None when there is none or it cannot be read (git,
    too, passes over an unreadable ignore file)."""
    if not os.path.isfile(path):
        return None
    try:
        text = read_file(path).decode("utf-8", errors="replace")
    except OSError:
        return None
    from pathspec import GitIgnoreSpec

    return GitIgnoreSpec.from_lines([line for line in text.splitlines() if _valid_pattern(line)])


def _valid_pattern(line: str) -> bool:
    """Whether pathspec compiles the line (`!` alone, a trailing backslash, `[z-a]` do not): git
    passes over a pattern it cannot use, and so does the walk, rather than stop."""
    from pathspec import GitIgnoreSpec

    try:
        GitIgnoreSpec.from_lines([line])
    except Exception:  # pathspec's own error, or re.error from the pattern it builds
        return False
    return True


def _repository_root(start: str) -> Optional[str]:
    directory = start
    while True:
        if os.path.exists(os.path.join(directory, ".git")):
            return directory
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def _config_home() -> str:
    return os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")


def global_excludes_file() -> str:
    """Where git reads the user's global excludes: `core.excludesFile` from ~/.gitconfig or
    $XDG_CONFIG_HOME/git/config (the latter read first, so ~/.gitconfig wins, as in git), else
    the default file."""
    configured: Optional[str] = None
    for config in (os.path.join(_config_home(), "git", "config"), os.path.join(os.path.expanduser("~"), ".gitconfig")):
        configured = _excludes_file_setting(config) or configured
    if configured:
        return os.path.expanduser(configured)
    return os.path.join(_config_home(), "git", "ignore")


_SECTION = re.compile(r"^\s*\[\s*([A-Za-z0-9.-]+)\s*(?:\"[^\"]*\"\s*)?\]")
_EXCLUDES_FILE = re.compile(r"^\s*excludesfile\s*=\s*(.*?)\s*$", re.IGNORECASE)


def _excludes_file_setting(config: str) -> Optional[str]:
    """`core.excludesFile` in one git configuration file, read as text (includes not followed)."""
    try:
        text = read_file(config).decode("utf-8", errors="replace")
    except OSError:
        return None
    found: Optional[str] = None
    section = ""
    for line in text.splitlines():
        header = _SECTION.match(line)
        if header is not None:
            section = header.group(1).lower()
            line = line[header.end():]
        setting = _EXCLUDES_FILE.match(line)
        if section == "core" and setting is not None:
            found = _unquote(setting.group(1))
    return found


def _unquote(value: str) -> str:
    value = re.split(r"\s[#;]", value, maxsplit=1)[0].strip()  # a trailing comment
    if len(value) >= 2 and value[0] == value[-1] == '"':
        value = value[1:-1]
    return value

