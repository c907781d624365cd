"""`[tool.ddplint]` in pyproject.toml, or a ddplint.toml, found by walking up from each checked file.

The keys are ruff's, so users arriving from ruff need no explanation:

    [tool.ddplint]
    select = ["DDP"]                  # replaces the default rule set
    extend-select = ["DDP012"]        # adds to it
    ignore = ["DDP004"]
    exclude = [...]                   # replaces the default excluded directories
    extend-exclude = ["legacy/"]      # adds to them
    [tool.ddplint.per-file-ignores]
    "tests/*" = ["DDP001"]

Two keys are ddplint's own (ruff's rules have options too; these are the analysis's): what the
project's own code means, for every rule that asks (analysis/options.py):

    rank-zero-functions = ["utils.is_master"]             # true on rank 0 only
    sharded-loader-factories = ["data.build_sharded_loader"]  # return a loader already sharded

Patterns are relative to the directory holding the configuration file. Anything malformed raises
`ConfigError` with one line naming the file, the key and the problem; the CLI turns that into exit 2.
"""

from __future__ import annotations

import fnmatch
import os
import sys
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, Sequence

from ddplint.analysis.options import NO_OPTIONS, AnalysisOptions
from ddplint.rules import SELECTABLE, UnknownSelector, load_rules, select_codes
from ddplint.source import read_file, reason_of

if TYPE_CHECKING:
    from ddplint.rules.base import Rule

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

# Directory names never worth descending into (ruff's defaults, trimmed to what occurs here).
DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".bzr", ".venv", "venv", ".tox", ".nox", ".eggs", "__pycache__",
    "__pypackages__", "build", "dist", "node_modules", "site-packages", ".mypy_cache",
    ".pytest_cache", ".ruff_cache", ".ddplint_cache", ".ipynb_checkpoints",
)

CONFIG_FILES = ("ddplint.toml", "pyproject.toml")  # the dedicated file wins in the same directory
_LIST_KEYS = ("select", "extend-select", "ignore", "exclude", "extend-exclude")
_SELECTOR_KEYS = ("select", "extend-select", "ignore")
# Dotted function names the analysis is told about (analysis/options.py), key -> its field.
_OPTION_KEYS = {"rank-zero-functions": "rank_zero_functions", "sharded-loader-factories": "sharded_loader_factories"}
KNOWN_KEYS = frozenset((*_LIST_KEYS, "per-file-ignores", *_OPTION_KEYS))


class ConfigError(Exception):
    """A configuration file that cannot be used; the message is one line naming file, key, problem."""


@dataclass(frozen=True)
class Settings:
    """What one configuration file (or none) asks for. Immutable, so it can be shared and cached."""

    path: Optional[Path] = None  # the file it was read from; None for built-in defaults
    root: Path = field(default_factory=Path.cwd)  # patterns are relative to this directory
    select: Optional[tuple[str, ...]] = None  # None: the default rule set
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    options: AnalysisOptions = NO_OPTIONS  # rank-zero-functions, sharded-loader-factories

    # -- rules ---------------------------------------------------------------------------------
    def codes(self) -> tuple[str, ...]:
        """The rules for files with no per-file ignore, by code (registry order). Raises
        UnknownSelector for a bad code."""
        return _chosen_codes(self.select, self.extend_select, self.ignore)

    def codes_for(self, path: Path | str) -> tuple[str, ...]:
        """The rules to run on one file, by code: select / extend-select / ignore, then
        per-file-ignores. Loads no rule: a file whose result is cached needs only these."""
        codes = self.codes()
        ignored = self.per_file_ignored_codes(path)
        if not ignored:
            return codes
        dropped = set(select_codes(ignored)) if "ALL" not in ignored else set(codes)
        return tuple(code for code in codes if code not in dropped)

    def rules(self) -> tuple[Rule, ...]:
        return load_rules(self.codes())

    def rules_for(self, path: Path | str) -> tuple[Rule, ...]:
        return load_rules(self.codes_for(path))

    def per_file_ignored_codes(self, path: Path | str) -> tuple[str, ...]:
        if not self.per_file_ignores:
            return ()
        relative = self._relative(path)
        codes: list[str] = []
        for pattern, pattern_codes in self.per_file_ignores:
            if _matches(pattern, relative):
                codes.extend(pattern_codes)
        return tuple(codes)

    # -- files ---------------------------------------------------------------------------------
    def is_excluded(self, path: Path | str) -> bool:
        """Whether a file or directory is excluded: any pattern matching the path relative to the
        configuration's directory, or (for bare names like `build`) any of its components."""
        relative = self._relative(path)
        names, others = _split_patterns((*self.exclude, *self.extend_exclude))
        if names and not names.isdisjoint(relative.split("/")):
            return True
        return any(_matches(pattern, relative) for pattern in others)

    def _relative(self, path: Path | str) -> str:
        # String work, not pathlib: this runs for every file and directory of a walk.
        absolute = os.path.abspath(path)
        root = _directory_prefix(self.root) if self.root.is_absolute() else os.path.join(os.path.abspath(self.root), "")
        relative = absolute[len(root):] if absolute.startswith(root) else absolute
        return relative.replace(os.sep, "/")

    def with_overrides(self, overrides: "Overrides") -> "Settings":
        """The command line's choices on top, layered as ruff does: `--select` replaces the file's
        select and ignore (so `--select DDP004` runs DDP004 even if the file ignores it),
        `--ignore`, `--extend-select` and `--extend-exclude` add to the file's, `--exclude` replaces."""
        changes: dict[str, Any] = {}
        if overrides.select is not None:
            changes["select"], changes["ignore"] = tuple(overrides.select), ()
            changes["extend_select"] = ()
        ignore = changes.get("ignore", self.ignore)
        changes["ignore"] = (*ignore, *overrides.ignore)
        changes["extend_select"] = (*changes.get("extend_select", self.extend_select), *overrides.extend_select)
        if overrides.exclude is not None:
            changes["exclude"] = tuple(overrides.exclude)
        changes["extend_exclude"] = (*self.extend_exclude, *overrides.extend_exclude)
        return replace(self, **changes)


@dataclass(frozen=True)
class Overrides:
    """What the command line says about settings; None / () where it says nothing."""

    select: Optional[Sequence[str]] = None
    extend_select: Sequence[str] = ()
    ignore: Sequence[str] = ()
    exclude: Optional[Sequence[str]] = None
    extend_exclude: Sequence[str] = ()


class Resolver:
    """Settings per checked file for one run: the nearest configuration (or `config_file`, or
    none when `isolated`) with the command line on top, looked up once per directory."""

    def __init__(self, overrides: Overrides = Overrides(), config_file: Optional[Path] = None, isolated: bool = False):
        self.overrides = overrides
        self.config_file = config_file
        self.isolated = isolated
        self._by_directory: dict[str, Settings] = {}
        self._configs: dict[str, Optional[Path]] = {}

    def settings_for(self, path: Path | str) -> Settings:
        directory = os.path.abspath(path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path)))
        settings = self._by_directory.get(directory)
        if settings is None:
            if self.config_file is not None:
                base = settings_from_file(self.config_file)
            elif self.isolated:
                base = Settings(root=Path.cwd())
            else:
                found = self._nearest_config(directory)
                base = settings_from_file(found) if found is not None else Settings(root=Path(directory))
            settings = self._by_directory[directory] = base.with_overrides(self.overrides)
        return settings

    def _nearest_config(self, directory: str) -> Optional[Path]:
        """`find_config(directory)`, remembered for the run: a walk asks for every directory, and
        one without a configuration file of its own has its parent's answer. A loop upwards, not
        recursion: a folder 1,000 levels deep has an answer too."""
        unanswered: list[str] = []
        current = directory
        while current not in self._configs:
            unanswered.append(current)
            own = config_in(Path(current))
            parent = os.path.dirname(current)
            if own is not None or parent == current:
                self._configs[current] = own
                break
            current = parent
        answer = self._configs[current]
        for below in unanswered:
            self._configs[below] = answer
        return answer

    def rules_for(self, path: str) -> tuple[Rule, ...]:
        return load_rules(self.codes_for(path))

    def options_for(self, path: str) -> AnalysisOptions:
        """The analysis options of the configuration that applies to `path`."""
        return self._settings_in(os.path.dirname(os.path.abspath(path))).options

    def codes_for(self, path: str) -> tuple[str, ...]:
        return self._settings_in(os.path.dirname(os.path.abspath(path))).codes_for(path)

    def is_excluded(self, path: Path | str) -> bool:
        """Judged by the settings of the directory holding `path`."""
        return self._settings_in(os.path.dirname(os.path.abspath(path))).is_excluded(path)

    def _settings_in(self, directory: str) -> Settings:
        settings = self._by_directory.get(directory)
        return settings if settings is not None else self.settings_for(directory)


@lru_cache(maxsize=64)
def _chosen_codes(
    select: Optional[tuple[str, ...]], extend_select: tuple[str, ...], ignore: tuple[str, ...]
) -> tuple[str, ...]:
    # Asked for every checked file: the same few settings each time.
    chosen = set(select_codes(select, ignore))
    if extend_select:
        chosen |= set(select_codes(extend_select, ignore))
    return tuple(entry.code for entry in SELECTABLE if entry.code in chosen)


@lru_cache(maxsize=64)
def _directory_prefix(root: Path) -> str:
    # An absolute root's prefix, computed once: a walk asks for every file and directory.
    return os.path.join(os.path.abspath(root), "")


@lru_cache(maxsize=64)
def _split_patterns(patterns: tuple[str, ...]) -> tuple[frozenset[str], tuple[str, ...]]:
    """Plain names (`build`, `.venv`: most patterns, and all the defaults) as a set, matched
    against path components at once; the globs and paths for `_matches`."""
    names, others = set(), []
    for pattern in patterns:
        text = pattern.strip()
        bare = text.rstrip("/")
        if bare and not text.startswith("./") and "/" not in bare and not any(c in bare for c in "*?["):
            names.add(bare)
        else:
            others.append(pattern)
    return frozenset(names), tuple(others)


def _matches(pattern: str, relative: str) -> bool:
    """ruff-like matching: `name` matches that name at any depth, `dir/` a directory and all it
    holds, anything else a glob over the relative path (where `*` also crosses `/`)."""
    pattern = pattern.strip()
    if pattern.startswith("./"):
        pattern = pattern[2:]
    parts = relative.split("/")
    if "/" not in pattern.rstrip("/"):
        name = pattern.rstrip("/")
        return any(fnmatch.fnmatchcase(part, name) for part in parts)
    directory = pattern.rstrip("/")
    if fnmatch.fnmatchcase(relative, directory):
        return True
    return any(fnmatch.fnmatchcase("/".join(parts[:i]), directory) for i in range(1, len(parts)))


# -- finding and reading ----------------------------------------------------------------------
def find_config(start: Path) -> Optional[Path]:
    """The nearest ddplint.toml, or pyproject.toml with a [tool.ddplint] table, from `start` (a
    file or a directory) upwards."""
    current = Path(os.path.abspath(start))
    if not os.path.isdir(current):  # os.path: False, not PermissionError, for a folder that may not be searched
        current = current.parent
    for directory in (current, *current.parents):
        found = config_in(directory)
        if found is not None:
            return found
    return None


def config_in(directory: Path) -> Optional[Path]:
    """The directory's own configuration file, if it has one. Only regular files count (links
    followed): a named pipe called pyproject.toml is passed over, as is a folder that may not
    be searched (nothing in it can be checked either)."""
    for name in CONFIG_FILES:
        candidate = directory / name
        if os.path.isfile(candidate) and (name == "ddplint.toml" or _has_ddplint_table(candidate)):
            return candidate
    return None


def _has_ddplint_table(pyproject: Path) -> bool:
    """Raises ConfigError for a pyproject.toml that cannot be read: it may hold settings."""
    data = _read_config_bytes(pyproject)
    if b"ddplint" not in data:
        return False  # cheap: most pyproject.toml files never mention us, so never parse them
    return "ddplint" in _tool_table(_parse_toml(data, pyproject), pyproject)


def _tool_table(document: dict, pyproject: Path) -> dict:
    """pyproject.toml's `[tool]` table (empty when there is none)."""
    tool = document.get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError(f"{pyproject}: 'tool': expected a table, got {_describe(tool)}")
    return tool


# Parsed settings per configuration file, with the (mtime, size) they were read at: an editor
# (the LSP server) keeps asking, and a changed file on disk must be read again.
_CACHE: dict[Path, tuple[tuple[int, int], Settings]] = {}


def load_settings(start: Path) -> Settings:
    """The settings for a file or directory: its nearest configuration, else the defaults."""
    path = find_config(start)
    if path is None:
        return Settings(root=Path(os.path.abspath(start if os.path.isdir(start) else Path(start).parent)))
    return settings_from_file(path)


def settings_from_file(path: Path) -> Settings:
    try:
        stat = path.stat()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or type(exc).__name__}") from None
    stamp = (stat.st_mtime_ns, stat.st_size)
    cached = _CACHE.get(path)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    document = _parse_toml(_read_config_bytes(path), path)
    # pyproject.toml keeps its settings under [tool.ddplint]; any other file (ddplint.toml, or
    # whatever --config names) holds them at the top level, like ruff.toml.
    table = _tool_table(document, path).get("ddplint", {}) if path.name == "pyproject.toml" else document
    settings = _parse(table, path)
    _CACHE[path] = (stamp, settings)
    return settings


def _read_config_bytes(path: Path) -> bytes:
    """The file's bytes: a regular file only, size-bounded (`source.read_file`), so that
    `--config` naming a pipe or a device is an error rather than a hang."""
    try:
        return read_file(path)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {reason_of(exc)}") from None


def _parse_toml(data: bytes, path: Path) -> dict:
    try:
        return tomllib.loads(data.decode("utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    except RecursionError:  # tomllib parses nested arrays and inline tables recursively
        raise ConfigError(f"{path}: invalid TOML: nested too deeply") from None


def _parse(table: Any, path: Path) -> Settings:
    where = "[tool.ddplint]" if path.name == "pyproject.toml" else "top level"
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: {where}: expected a table")
    for key in table:
        if key not in KNOWN_KEYS:
            known = ", ".join(sorted(KNOWN_KEYS))
            raise ConfigError(f"{path}: unknown key {key!r} in {where} (known: {known})")
    values: dict[str, Any] = {}
    for key in _LIST_KEYS:
        if key in table:
            values[key.replace("-", "_")] = _string_list(table[key], path, key)
    for key in _SELECTOR_KEYS:
        _check_selectors(values.get(key.replace("-", "_"), ()), path, key)
    per_file = table.get("per-file-ignores", {})
    if not isinstance(per_file, dict):
        raise ConfigError(f"{path}: 'per-file-ignores': expected a table of pattern = [codes]")
    pairs = []
    for pattern, codes in per_file.items():
        key = f"per-file-ignores.{pattern!r}"
        code_list = _string_list(codes, path, key)
        _check_selectors(code_list, path, key)
        pairs.append((pattern, code_list))
    values["per_file_ignores"] = tuple(pairs)
    values["options"] = _analysis_options(table, path)
    return Settings(path=path, root=Path(os.path.abspath(path.parent)), **values)


def _string_list(value: Any, path: Path, key: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{path}: {key!r}: expected a list of strings, got {_describe(value)}")
    return tuple(value)


def _analysis_options(table: dict, path: Path) -> AnalysisOptions:
    declared = {field: _dotted_names(table[key], path, key) for key, field in _OPTION_KEYS.items() if key in table}
    return AnalysisOptions(**declared)


def _dotted_names(value: Any, path: Path, key: str) -> tuple[str, ...]:
    """A list of function names as Python spells them (`is_master`, `utils.is_master`)."""
    names = _string_list(value, path, key)
    for name in names:
        if not all(part.isidentifier() for part in name.split(".")):
            raise ConfigError(f"{path}: {key!r}: {name!r} is not a function name (expected e.g. 'utils.is_master')")
    return names


def _check_selectors(selectors: Sequence[str], path: Path, key: str) -> None:
    for selector in selectors:
        try:
            select_codes([selector])
        except UnknownSelector:
            raise ConfigError(f"{path}: {key!r}: unknown rule selector {selector!r}") from None


def _describe(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) < 40 else text[:37] + '...'}"
