"""Cross-module flow: the project a checked file belongs to, and what its modules offer it.

A file's analysis reads the summaries (analysis/summaries.py: `ModuleSummary`, worked out from one
module's source alone) of the project modules it imports directly (`ProjectView`): the loader a
helper of data.py returns, the process group utils.py starts. The index (`ProjectIndex`) finds those
modules as Python would (relative imports, packages, absolute names from any folder up to the
project's root, `sys.path` additions, re-exports, star imports),
decides which need a summary at all, and keeps the summaries: in memory for the run, shared between
worker processes of the run (`SharedSummaries`), and across runs (`SummaryStore`, the results cache).

Because a summary depends on one file's content only, a file's result depends on its own content
plus the content of the project files it imports directly: `ProjectIndex.dependencies(path)`
lists them, so a result cache can key on all of them. Nothing is transitive on purpose: a summary
never reads another summary, so there is no cycle and no order to get right. The one exception
reads import lines only: what `from models import *` hands on (models.py's own imports, and
those of the modules it star-imports in turn, `ProjectIndex.star_exports`); those files are
dependencies too. A function judged by its callers (`rank_callers`) is the reverse question: which
project modules call it from code that runs in every rank.

The index holds every module of the project a checked file belongs to (`project_root`: the
nearest folder with pyproject.toml, ddplint.toml, setup.cfg, setup.py or .git; discovery.project_modules
walks it), not only the files named: `ddplint .`, `ddplint FILE`, stdin, --fix and the language
server give a file the same findings.

The static side never imports or runs the project's code; the modules are parsed like any file.
"""

from __future__ import annotations

import ast
import hashlib
import os
import pickle
import re
from contextlib import contextmanager, nullcontext
from pathlib import Path
from types import CodeType
from typing import (
    TYPE_CHECKING,
    AbstractSet,
    Any,
    Callable,
    ContextManager,
    Iterable,
    Iterator,
    Optional,
    Protocol,
    TypeVar,
)

from ddplint.analysis import summaries
from ddplint.analysis.search_path import added_folders
from ddplint.analysis.summaries import (
    FactoryLoader,
    LoaderKwargs,
    LoaderTrainer,
    ModuleSummary,
    PassRepeater,
    outline_from_json,
    outline_to_json,
    summary_from_json,
    summary_to_json,
)
from ddplint.analysis.torch_api import SPAWNERS
from ddplint.source import MAX_ANALYSED_BYTES, read_file

if TYPE_CHECKING:
    import libcst as cst

    from ddplint.analysis.facts import CallSite, ModuleFacts
    from ddplint.analysis.model import ModuleModel
    from ddplint.analysis.records import CollectiveReach

# `from .data import build_loader` / `import utils, data`: the module part of import statements.
# Whole import statements, parenthesised ones across lines: read without parsing the file.
# A statement runs on past a backslash at the end of a line (`import a, \` then `    b`).
_IMPORT_STATEMENT = re.compile(
    rb"(?m)^[ \t]*(?:from[ \t]+\.*[\w.]*[ \t]+import[ \t]*\([^)]*\)"
    rb"|from[ \t]+\.*[\w.]*[ \t]+import(?:[^\n;#\\]|\\\r?\n)*|import[ \t](?:[^\n;#\\]|\\\r?\n)*)"
)
# `def name` / `class name` anywhere in a module (a re-export is followed only past a module
# that does not define the name itself).
_MAX_RELAYS = 2  # modules with no distributed code followed in a row from a helper to a rank caller
_DEFINED_NAME = re.compile(rb"(?m)^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+(\w+)")
_IMPORTED_NAMES = re.compile(rb"(?m)^[ \t]*((?:from[ \t]+[\w.]+[ \t]+)?import[ \t(]+[^\n]*)")
_NO_PLACES: tuple[frozenset[int], frozenset[int]] = (frozenset(), frozenset())


# What marks a project's root, walking up from a checked file: the modules it imports may lie
# anywhere under that folder, whichever files ddplint was asked to check.
PROJECT_MARKERS = ("pyproject.toml", "ddplint.toml", "setup.cfg", "setup.py", ".git")


def project_root(path: str) -> Optional[str]:
    """The nearest folder at or above `path`'s own folder that holds a project marker; None when
    no folder up to the file system's root does (the project is then the files checked)."""
    return ProjectRoots().of(path)


class ProjectRoots:
    """`project_root` for many files, each folder's answer worked out once: a run over a package
    asks for every file, and its files share a few hundred folders (one walk up to `/` per file,
    five markers looked for at each level, was a fifth of a warm run over torch)."""

    def __init__(self) -> None:
        self._by_folder: dict[str, Optional[str]] = {}  # a folder as the paths spell it
        self._by_real_folder: dict[str, Optional[str]] = {}

    def of(self, path: str) -> Optional[str]:
        if os.path.islink(path):  # a linked file belongs to the project of the file it leads to
            return self._of_real_folder(os.path.dirname(os.path.realpath(path)))
        # Otherwise realpath(dirname(path)) is dirname(realpath(path)): resolve the folder once.
        folder = os.path.dirname(path)
        if folder not in self._by_folder:
            self._by_folder[folder] = self._of_real_folder(os.path.realpath(folder))
        return self._by_folder[folder]

    def _of_real_folder(self, folder: str) -> Optional[str]:
        passed: list[str] = []  # the folders on the way up, which get the same answer
        while folder not in self._by_real_folder:
            passed.append(folder)
            if any(os.path.exists(os.path.join(folder, marker)) for marker in PROJECT_MARKERS):
                root: Optional[str] = folder
                break
            parent = os.path.dirname(folder)
            if parent == folder:
                root = None
                break
            folder = parent
        else:
            root = self._by_real_folder[folder]
        for below in passed:
            self._by_real_folder[below] = root
        return root


def _each_file_once(paths: list[str]) -> list[str]:
    """`paths` less the relative ones that are also given from the file system's root (a checked
    file, then again as the walk of its project found it): resolving a path costs a look-up of
    the file, and a run over a package asks for every file twice. Not where `..` is spelled out:
    `link/../x.py` is resolved through the link, which `os.path.abspath` would not follow."""
    spelled = set(paths)
    return [
        path for path in paths
        if os.path.isabs(path) or os.pardir in path.split(os.sep) or os.path.abspath(path) not in spelled
    ]


def _module_name(path: str) -> str:
    """The name a project file is imported by: its stem, or its package's folder for `__init__.py`."""
    stem = os.path.splitext(os.path.basename(path))[0]
    return os.path.basename(os.path.dirname(path)) if stem == "__init__" else stem


class ProjectIndex:
    """The files being checked together, their module names, and (lazily) their summaries."""

    def __init__(
        self,
        paths: Iterable[str],
        parses_safely: Callable[[bytes, str], bool],
        holding_tree: Callable[[int], ContextManager[object]] = lambda size: nullcontext(),
    ) -> None:
        # The engine's guard in front of libcst (syntax, pathological nesting), handed down so
        # this layer never imports the screens above it.
        self._parses_safely = parses_safely
        # Held while a module of this many bytes is parsed and summarised (the pool's "one large
        # tree at a time" across workers).
        self._holding_tree = holding_tree
        self._real_directories: dict[str, str] = {}
        self.files = {self._real_path(p) for p in _each_file_once([str(p) for p in paths if str(p).endswith(".py")])}
        self._summaries: dict[str, Optional[ModuleSummary]] = {}
        self._outlines: dict[str, tuple[bool, Optional[frozenset[str]]]] = {}
        # (size, mtime_ns) of each module when its outline or summary was worked out
        self._stamps: dict[str, Optional[tuple[int, int]]] = {}
        # Functions that start the process group (any module's), and by module those that may make
        # a collective: what the screen asks before a file counts as possibly distributed.
        self._starter_names: Optional[frozenset[str]] = None
        self._collective_helpers: dict[str, frozenset[str]] = {}
        # What other processes of the run have worked out (a worker pool's; none by default).
        self._shared: SharedSummaries = _NOT_SHARED
        # Summaries and outlines kept across runs (the results cache folder's; none by default).
        self._store: SummaryStore = _NO_STORE
        self._last_targets: tuple[str, bytes, list[tuple[str, str]]] = ("", b"", [])
        # The folder all the files lie under: only imports are resolved with it (a cold run's
        # work), so a run over cached files never builds it (a Path per file).
        self._common_folder: Optional[tuple[Optional[Path]]] = None
        self._resolved: dict[tuple[str, str], Optional[tuple[str, str]]] = {}
        # path -> (the names its `from M import *` hands on to imports, the files they come from)
        self._star_exports: dict[str, tuple[dict[str, frozenset[str]], frozenset[str]]] = {}
        # (importer, name) -> the module that re-exports it, where `_resolved` names another
        self._reexported_by: dict[tuple[str, str], tuple[str, str]] = {}
        self._definitions: dict[tuple[str, str], tuple[str, str]] = {}  # (module, name) -> where defined
        self._names_of_module: dict[str, tuple[Optional[frozenset[str]], dict[str, list[tuple[str, bool]]]]] = {}
        self._importer_places: dict[str, tuple[str, str, list[str], list[str]]] = {}
        self._project_roots = ProjectRoots()
        # sys.path additions of `_init_paths`-style modules (search_path.py), worked out lazily
        self._path_additions: dict[str, list[str]] = {}
        self._adders_by_folder: dict[str, dict[str, list[str]]] = {}
        self._files_by_folder: Optional[dict[str, list[str]]] = None
        # (module, function) -> [(calling module, "train.py:194")]
        self._rank_callers: dict[tuple[str, str], list[tuple[str, str]]] = {}
        self._sets_device: dict[str, bool] = {}  # calling module -> chooses_device_or_is_reported
        self._cpu_saves: dict[tuple[str, frozenset[str]], bool] = {}
        # modules whose answer read other modules of the project (analysis/caller_values.py)
        self._read_the_project: set[str] = set()
        self._rank_calls: dict[str, dict[tuple[str, str], str]] = {}
        # module with no distributed code -> project function it calls -> {its entry: "engine.py:40"}
        self._relays: dict[str, dict[tuple[str, str], dict[str, str]]] = {}
        self._relayed_callers: dict[tuple[str, str], list[tuple[str, str]]] = {}
        self._text_matches: dict[tuple, bool] = {}  # some_module_matches, by its patterns
        self._calls_named: dict[str, frozenset[str]] = {}
        self._module_models: dict[str, tuple[Optional[tuple[int, int]], Optional["ModuleModel"]]] = {}
        self._functions_naming: dict[tuple[str, tuple[bytes, ...]], tuple[Optional[tuple[int, int]], frozenset[str]]] = {}
        # Names a project module can be imported by: file stems, and package directory names.
        self._files_by_name: dict[bytes, list[str]] = {}
        for f in sorted(self.files):  # os.path, not pathlib: a run over unchanged files pays for this
            self._files_by_name.setdefault(_module_name(f).encode(), []).append(f)
        self._names = set(self._files_by_name)

    def __len__(self) -> int:
        return len(self.files)

    def _roots(self) -> Optional[Path]:
        if self._common_folder is None:
            self._common_folder = (_common_root(self.files),)
        return self._common_folder[0]

    def _real_path(self, path: str) -> str:
        """`os.path.realpath(path)`, with each directory resolved once: files share a few
        hundred directories, and realpath looks up every component of every path (the index is
        built, and asked for each cached file's imports, by every run)."""
        head, name = os.path.split(path)
        real_head = self._real_directories.get(head)
        if real_head is None:
            real_head = self._real_directories[head] = os.path.realpath(head)
        candidate = os.path.join(real_head, name)
        return os.path.realpath(candidate) if os.path.islink(candidate) else candidate

    # -- imports to files ----------------------------------------------------------------------
    def resolve(self, importer: str, qualified: str) -> Optional[tuple[str, str]]:
        """(project file, attribute) for a name `importer` imports (`.data.build_loader`,
        `utils.init_distributed`), or None if it is not one of the project's files."""
        key = (importer, qualified)
        if key not in self._resolved:
            direct = self._resolve(importer, qualified)
            self._resolved[key] = self._defining(*direct) if direct is not None else None
            if direct is not None and self._resolved[key] != direct:
                self._reexported_by[key] = direct
        return self._resolved[key]

    def _defining(self, file: str, attribute: str, depth: int = 0) -> tuple[str, str]:
        """Where `attribute` of module `file` is defined, following the module's re-exports of
        project names (`from .build import make_loader` in a package's `__init__.py`, also
        `from .build import *` where build.py defines it): a summary records what a module
        defines, not what it imports."""
        if not attribute or depth > 2:
            return file, attribute
        key = (file, attribute)
        if key not in self._definitions:  # many importers ask about one module's names
            self._definitions[key] = self._find_definition(file, attribute, depth)
        return self._definitions[key]

    def _find_definition(self, file: str, attribute: str, depth: int) -> tuple[str, str]:
        defined, bound = self._outline_of_names(file)
        if defined is None or attribute in defined:
            return file, attribute  # defined here, or unreadable
        for qualified, starred in bound.get(attribute, []) + bound.get("*", []):
            if starred:
                qualified = f"{qualified}{attribute}"
            found = self._resolve(file, qualified)
            if found is None or found[0] == file:
                continue
            deeper = self._defining(*found, depth=depth + 1)
            if not starred or self._defines(*deeper):
                return deeper
        return self._submodule(file, attribute) or (file, attribute)

    def _submodule(self, file: str, attribute: str) -> Optional[tuple[str, str]]:
        """(the submodule's file, "") when `attribute` of a package (its `__init__.py`) that
        neither defines nor binds it is a module of the package: `from pkg import comm` and
        `import pkg.comm` name pkg/comm.py, as Python's import does. A name the `__init__.py`
        assigns at its top level or imports under an alias (`comm = Local()`, `import x as
        comm`) is that object instead."""
        folder, name = os.path.split(file)
        if name != "__init__.py" or not attribute.isidentifier():
            return None
        below = os.path.join(folder, attribute)
        candidates = [c for c in (below + ".py", os.path.join(below, "__init__.py")) if c in self.files]
        if not candidates:
            return None
        try:
            data = read_file(file)
        except OSError:
            return None
        word = re.escape(attribute.encode())
        if re.search(rb"(?m)^" + word + rb"[ \t]*[:=,]|\bas[ \t]+" + word + rb"\b", data):
            return None
        return candidates[0], ""

    def defines_class_method(self, file: str, name: str, method: str) -> bool:
        """Module `file` has a top-level `class name` and a `@classmethod` / `@staticmethod`
        called `method` (read off its text, not parsed): `Net.from_pretrained(path)` makes or
        uses the class itself, where `Base.helper(self, x)` is a subclass borrowing a method."""
        try:
            data = read_file(file)
        except OSError:
            return False
        if re.search(rb"(?m)^class[ \t]+" + re.escape(name.encode()) + rb"\b", data) is None:
            return False
        decorated = rb"@(?:classmethod|staticmethod)[ \t]*\r?\n[ \t]*(?:async[ \t]+)?def[ \t]+" + re.escape(method.encode()) + rb"\b"
        return re.search(decorated, data) is not None

    def _defines(self, file: str, attribute: str) -> bool:
        defined, _ = self._outline_of_names(file)
        return defined is None or attribute in defined

    def _outline_of_names(self, file: str) -> tuple[Optional[frozenset[str]], dict[str, list[tuple[str, bool]]]]:
        """(the names module `file` defines by `def` / `class`, None if unreadable; what its
        `from ... import` statements bind: name -> [(qualified, False)], and "*" -> [(module
        prefix, True)] for star imports). Read once per module, without parsing it."""
        if file not in self._names_of_module:
            try:
                data = read_file(file)
            except OSError:
                self._names_of_module[file] = (None, {})
                return self._names_of_module[file]
            defined = frozenset(match.decode("utf-8", "replace") for match in _DEFINED_NAME.findall(data))
            bound: dict[str, list[tuple[str, bool]]] = {}
            for statement in _IMPORT_STATEMENT.finditer(data):
                if statement.group(0).lstrip().startswith(b"from"):
                    for name, qualified, starred in _from_import_bindings(statement.group(0)):
                        bound.setdefault(name, []).append((qualified, starred))
            self._names_of_module[file] = (defined, bound)
        return self._names_of_module[file]

    def _resolve(self, importer: str, qualified: str) -> Optional[tuple[str, str]]:
        dots = len(qualified) - len(qualified.lstrip("."))
        parts = [p for p in qualified.lstrip(".").split(".") if p]
        importer_file, here, parents, within = self._places(importer)
        if dots:
            bases = [parents[dots - 2] if dots >= 2 else here] if dots - 1 <= len(parents) else []
        else:
            bases = [here, *self._search_path_additions(importer_file, here), *within]
        # `module.attribute` (what calls name), else the module itself (`from . import data`,
        # attribute ""); deeper chains (`data.sub.attr`) are not followed.
        splits = [(parts[:-1], parts[-1])] if len(parts) >= 2 else []
        splits.append((parts, ""))
        for base in bases:
            prefix = base if base.endswith(os.sep) else base + os.sep  # os.path.join's rule, faster
            for module, attribute in splits:
                path = prefix + os.sep.join(module)
                for resolved in (path + ".py", path + os.sep + "__init__.py"):
                    if resolved in self.files and resolved != importer_file:
                        return resolved, attribute
        return None

    def _search_path_additions(self, importer_file: str, here: str) -> list[str]:
        """Folders that the importer, or a module beside it that it imports (`import
        _init_paths`), puts on sys.path when imported (search_path.py)."""
        if importer_file not in self._path_additions:
            self._path_additions[importer_file] = self._find_path_additions(importer_file, here)
        return self._path_additions[importer_file]

    def _find_path_additions(self, importer_file: str, here: str) -> list[str]:
        adders = self._path_adders(here)
        if not adders:
            return []
        try:
            data = read_file(importer_file)
        except OSError:
            return []
        out: list[str] = []
        for module, folders in adders.items():
            stem = os.path.splitext(os.path.basename(module))[0].encode()
            imported = re.search(rb"(?m)^[ \t]*(?:import[ \t]+|from[ \t]+)" + re.escape(stem) + rb"\b", data)
            if module == importer_file or imported is not None:
                out += [folder for folder in folders if folder not in out]
        return out

    def _path_adders(self, folder: str) -> dict[str, list[str]]:
        """The modules of `folder` that put folders on sys.path, with those folders."""
        if folder not in self._adders_by_folder:
            adders = {}
            for module in self._files_in(folder):
                try:
                    data = read_file(module)
                except OSError:
                    continue
                added = added_folders(data, module)
                if added:
                    adders[module] = added
            self._adders_by_folder[folder] = adders
        return self._adders_by_folder[folder]

    def _files_in(self, folder: str) -> list[str]:
        if self._files_by_folder is None:
            self._files_by_folder = {}
            for f in sorted(self.files):
                self._files_by_folder.setdefault(os.path.dirname(f), []).append(f)
        return self._files_by_folder.get(folder, [])

    def _places(self, importer: str) -> tuple[str, str, list[str], list[str]]:
        """(real path, its folder, the folder's parents, those parents within the project's
        root), as plain strings: resolving is asked once per import of every file, and pathlib
        there cost seconds over a large package."""
        if importer not in self._importer_places:
            real = os.path.realpath(importer)
            here = Path(real).parent
            # Absolute imports start at any folder up to the files' common folder, or up to the
            # importer's project root when that lies higher: a package whose root folder holds no
            # module of its own (`src/pkg/train.py` importing `pkg.comm`, pyproject.toml beside
            # `src`) is imported from above every file of the project.
            limits = [root for root in (self._roots(), self._project_roots.of(real)) if root is not None]
            within = [str(p) for p in here.parents if any(_within(p, Path(limit)) for limit in limits)]
            self._importer_places[importer] = (real, str(here), [str(p) for p in here.parents], within)
        return self._importer_places[importer]

    def import_words(self, data: bytes) -> list[str]:
        """The module names (and other words) of a file's import lines, without parsing it."""
        if len(self.files) < 2 or b"import" not in data:
            return []
        words: set[bytes] = set()
        for match in _IMPORTED_NAMES.finditer(data):
            words.update(re.split(rb"[\s.,()]+", match.group(1)))
        return sorted(word.decode("ascii", "replace") for word in words & self._names)

    def dependency_words(self, path: str, data: bytes) -> list[str]:
        """The module names a results cache keys a file's result on: the words of its import lines,
        and the names of the files `dependencies` reaches beyond them (a star-import chain's
        modules, the module a package's re-export names), whose edits change the result too."""
        words = set(self.import_words(data))
        if words:
            words.update(_module_name(f) for f in self.dependencies(path))
        return sorted(words)

    def files_named(self, words: Iterable[str], exclude: Optional[str] = None) -> list[str]:
        """The project files that module names stand for (a superset: two `utils.py` both count)."""
        own = self._real_path(exclude) if exclude else None
        return sorted({f for word in words for f in self._files_by_name.get(word.encode(), ()) if f != own})

    def imported_targets(self, path: str, data: bytes) -> list[tuple[str, str]]:
        """(project file, attribute) for each import statement of the file that resolves to one of
        the project's files; attribute "" for a whole module (`import utils`, `from . import data`).
        Only the import statements are parsed, not the file. The last answer is kept: the engine
        asks it of one file several times."""
        if len(self.files) < 2 or b"import" not in data:
            return []
        last = self._last_targets
        if last[0] == path and last[1] == data:
            return last[2]
        targets = set()
        for statement in _IMPORT_STATEMENT.finditer(data):
            for qualified in _imported_names(statement.group(0)):
                resolved = self.resolve(path, qualified)
                if resolved is not None:
                    targets.add(resolved)
        found = sorted(targets)
        self._last_targets = (path, data, found)
        return found

    def may_import_project(self, path: str, data: bytes) -> bool:
        """Screen before parsing: does the file import something from a project module that offers
        anything (a loader factory, a process-group set-up, ...)? Only those modules are
        summarised (each once per index)."""
        return any(self._offers(file) for file, _ in self.imported_targets(path, data))

    def offers_any_of(self, path: str, data: bytes, names: frozenset[str]) -> bool:
        """Whether the file uses (`names`) a name it imports from a project module that offers it
        (a factory, a set-up helper, a collective, a dataset class): a file that uses none needs
        no cross-module look. A summary records only names the module defines by `def` /
        `class`, so a module is summarised only when it defines a name the file uses."""
        for file, attribute in self.imported_targets(path, data):
            wanted = names & {attribute} if attribute else names
            if not any(self._may_record(file, name) for name in wanted):
                continue
            summary = self.summary(file)
            if summary is not None and not wanted.isdisjoint(summary.offered_names()):
                return True
        return False

    def may_call_distributed_helper(self, path: str, data: bytes, names: AbstractSet[str]) -> bool:
        """Whether the file (`path`, `data`) using `names` could call a project function that
        starts the process group or makes a collective (ProjectView.starts_process_group,
        .collective): either puts the file's code inside a distributed job. Told without a parse:
        the call names the function, and the function is one that a module spelling a starter
        defines (any module: set-ups are few, found once per index by a look at every file's
        bytes), or one that a module spelling a collective defines and the file imports from it
        (collective helpers are many in a large package: only the imported modules are read)."""
        if self._starter_names is None:
            self._starter_names = frozenset(self._possible_starter_names())
        if not self._starter_names.isdisjoint(names):
            return True
        for file, attribute in self.imported_targets(path, data):
            offered = self._collective_helpers_of(file)
            if offered and (attribute in offered and attribute in names if attribute else not offered.isdisjoint(names)):
                return True
        return False

    def _possible_starter_names(self) -> Iterator[str]:
        for path in self.files:
            try:
                data = read_file(path)
            except OSError:
                continue
            code = summaries.compiled(data, path) if any(word in data for word in summaries.STARTER_WORDS) else None
            if code is not None:  # one that does not compile has no summary either: it is never parsed
                yield from summaries.functions_reaching_a_starter(code)

    def _collective_helpers_of(self, path: str) -> frozenset[str]:
        """The module's top-level functions that may make a collective (a superset of its
        summary's `collectives`), read once per module without a parse."""
        known = self._collective_helpers.get(path)
        if known is None:
            self._stamps.setdefault(path, _stamp(path))  # forget_changed then sees it change
            try:
                data = read_file(path)
            except OSError:
                data = b""
            code = summaries.compiled(data, path) if summaries.may_offer_a_collective(data) else None
            known = self._collective_helpers[path] = frozenset(summaries.functions_reaching_a_collective(code)) if code else frozenset()
        return known

    def _offers(self, path: str) -> bool:
        summary = self.summary(path)
        return summary is not None and summary.offers_anything()

    def dependencies(self, path: str, facts: Optional["ModuleFacts"] = None) -> list[str]:
        """The project files whose content a file's result depends on: those it imports from
        directly. Without `facts`, read off its import statements."""
        if facts is None:
            try:
                data = read_file(path)
            except OSError:
                return []
            found = set()
            for file, attribute in self.imported_targets(path, data):
                found.add(file)
                if attribute == "*":  # and the modules whose imports it hands on
                    found.update(self._exports_of(file, frozenset())[1])
            return sorted(found)
        found = set()
        for qualified_set in facts.imports.bindings.values():
            for qualified in qualified_set:
                target = self.resolve(path, qualified)
                if target is not None:
                    found.add(target[0])
                    # the re-exporting module too: an edit there may point the name elsewhere
                    reexporter = self._reexported_by.get((path, qualified))
                    if reexporter is not None:
                        found.add(reexporter[0])
        for module in facts.imports.star_modules:
            found.update(self._star_module(path, module)[1])
        return sorted(found)

    # -- star imports ----------------------------------------------------------------------------
    def star_exports(self, importer: str, module: str) -> dict[str, frozenset[str]]:
        """What `from module import *` binds in `importer` to an import of the module's own (`nn`
        -> torch.nn when the module says `import torch.nn as nn`), also through the module's own
        star imports of project modules; {} for a module outside the project. Names the module
        defines itself are left to the importer's guesses."""
        return self._star_module(importer, module)[0]

    def _star_module(self, importer: str, module: str) -> tuple[dict[str, frozenset[str]], frozenset[str]]:
        return self._star_module_of(importer, module, frozenset())

    def _exports_of(self, path: str, visiting: frozenset[str]) -> tuple[dict[str, frozenset[str]], frozenset[str]]:
        known = self._star_exports.get(path)
        if known is not None:
            return known
        if path in visiting or len(visiting) >= _STAR_IMPORT_DEPTH:
            return {}, frozenset()  # a cycle, or a chain too long to follow
        try:
            data = read_file(path)
        except OSError:
            return {}, frozenset({path})
        exports: dict[str, set[str]] = {}
        files = {path}
        for statement in _IMPORT_STATEMENT.finditer(data):
            text = statement.group(0)
            if text[:1] in (b" ", b"\t"):
                continue  # inside a block: a function's own import binds nothing for the importer
            for local, qualified in _import_bindings(text):
                if local == "*":
                    names, reached = self._star_module_of(path, qualified, visiting | {path})
                    files |= reached
                    for name, values in names.items():
                        exports.setdefault(name, set()).update(values)
                elif not qualified.startswith(".") and not local.startswith("_"):
                    exports.setdefault(local, set()).add(qualified)
        result = ({name: frozenset(values) for name, values in exports.items()}, frozenset(files))
        if not visiting:
            self._star_exports[path] = result
        return result

    def _star_module_of(self, path: str, module: str, visiting: frozenset[str]) -> tuple[dict[str, frozenset[str]], frozenset[str]]:
        separator = "" if module.endswith(".") else "."
        target = self.resolve(path, f"{module}{separator}*")  # the module itself, not a name of its parent
        if target is None or target[1] != "*":
            return {}, frozenset()
        return self._exports_of(target[0], visiting)

    # -- summaries -----------------------------------------------------------------------------
    def share_summaries(self, shared: "SharedSummaries") -> None:
        """Read summaries and outlines other processes computed, and leave the ones this
        process computes for them (a worker of a pool, before it checks any file)."""
        self._shared = shared

    def use_store(self, store: "SummaryStore") -> None:
        """Read module summaries and outlines kept by earlier runs, and keep the ones this index
        works out (a run with a results cache; before any file is checked, so workers share it)."""
        self._store = store

    def summary(self, path: str) -> Optional[ModuleSummary]:
        if path not in self._summaries:
            self._stamps.setdefault(path, _stamp(path))
            self._summaries[path] = self._summarise(path)
        return self._summaries[path]

    def adopt_summaries(self, older: "ProjectIndex") -> None:
        """Take over what an older index of the same project worked out about modules still in
        it (unless changed since): a fresh list of modules need not mean parsing them again."""
        for path, stamp in older._stamps.items():
            if path in self.files and _stamp(path) == stamp:
                self._stamps[path] = stamp
                if path in older._summaries:
                    self._summaries[path] = older._summaries[path]
                if path in older._outlines:
                    self._outlines[path] = older._outlines[path]

    def forget_changed(self) -> None:
        """Drop what was worked out about modules changed on disk since (an index kept across
        analyses: the language server's). One stat per module it has looked at. What star
        imports hand on is read again (import lines only: cheaper than a stat of each module)."""
        self._star_exports.clear()
        changed = [p for p, stamp in self._stamps.items() if _stamp(p) != stamp]
        if changed:
            self._rank_callers.clear()  # any module may have started or stopped calling a helper
            self._sets_device.clear()
            self._cpu_saves.clear()
            self._rank_calls.clear()
            self._relays.clear()
            self._relayed_callers.clear()
            self._calls_named.clear()
            self._starter_names = None  # a changed module may define a new starter
            self._text_matches.clear()
        for path in changed:
            del self._stamps[path]
            self._collective_helpers.pop(path, None)
            self._summaries.pop(path, None)
            self._outlines.pop(path, None)

    def summary_for(self, path: str, name: str) -> Optional[ModuleSummary]:
        """The module's summary as far as `name` goes. A summary records functions and classes
        only, so for a name the module defines by no `def` / `class` it says nothing, and an
        empty one stands in for it (None where the module would have none): the module is not
        parsed for it. In a large package most calls into sibling modules name helpers that no
        summary could record, and most modules are imported by many files."""
        if path in self._summaries or self._may_record(path, name):
            return self.summary(path)
        return summaries.NOTHING_RECORDED if self._outline(path)[0] else None

    def _may_record(self, path: str, name: str) -> bool:
        """Whether the module's summary could hold `name` (a module it cannot be built for
        holds nothing)."""
        summarisable, recordable = self._outline(path)
        return summarisable and (recordable is None or not name.isascii() or name in recordable)

    def _outline(self, path: str) -> tuple[bool, Optional[frozenset[str]]]:
        """(whether the module has a summary at all, the names its summary could record: None
        when that is not known). One compile of the module, no libcst."""
        if path not in self._outlines:
            self._stamps.setdefault(path, _stamp(path))
            known = self._shared.load("outline", path)
            # Not claimed like a summary: a compile costs less than waiting for another worker's.
            self._outlines[path] = known[0] if known else self._shared.saved("outline", path, self._stored_outline(path))
        return self._outlines[path]

    def _summarise(self, path: str) -> Optional[ModuleSummary]:
        summarisable, recordable = self._outline(path)
        if not summarisable:
            return None
        if recordable is not None and not recordable:
            return ModuleSummary()  # nothing it defines or calls can be recorded
        known = self._shared.load("summary", path)
        if known:
            return known[0]
        try:
            data = read_file(path)
        except OSError:
            return None
        # A summary names its module's file (`FactoryLoader.where`): kept per file name and content.
        kind = f"summary {os.path.basename(path)}"
        stored = summary_from_json(self._store.load(kind, data))
        if stored:  # the other workers read it from the store too
            return stored[0]
        # The large-tree lock before the module's claim, and nothing else taken while a claim is
        # held (a summary reads no other summary): workers waiting on each other never form a cycle.
        with self._holding_tree(len(data)), self._shared.claim(path):
            known = self._shared.load("summary", path)  # finished by another worker meanwhile
            if known:
                return known[0]
            summary = summaries.summary_of(data, path)
            self._store.save(kind, data, summary_to_json(summary))
            return self._shared.saved("summary", path, summary)

    def _stored_outline(self, path: str) -> tuple[bool, Optional[frozenset[str]]]:
        """The module's outline (`summaries.outline_from`), read from the store for a module whose content it has seen (the cheap
        screens first: only a module that passes them costs a look-up, and a compile if new)."""
        data = summaries.screened_source(path)
        if data is None:
            return False, None
        stored = outline_from_json(self._store.load(summaries.OUTLINE_KIND, data))
        if stored is not None:
            return stored
        outline = summaries.outline_from(data, path, self._parses_safely)
        self._store.save(summaries.OUTLINE_KIND, data, outline_to_json(outline))
        return outline

    def view_for(self, path: str) -> "ProjectView":
        return ProjectView(self, os.path.realpath(path))

    # -- callers in other modules ----------------------------------------------------------------
    def rank_callers(self, path: str, functions: AbstractSet[str]) -> list[str]:
        """Where ("train.py:194") a distributed module of the project calls one of `functions`
        (top-level functions of the module at `path`) from code that runs on every rank: a
        helper module with no distributed code of its own (`load_checkpoint` in utils.py) then
        runs in the ranks. Imports through a package's `__init__` that re-exports the function
        count. Only modules whose text names the function and imports a module of that name
        are parsed, each once per index."""
        return [place for _, place in self._rank_calls_into(path, functions)]

    def rank_callers_through_a_module(self, path: str, functions: AbstractSet[str]) -> list[str]:
        """`rank_callers`, and also where ("train.py:151 -> trainer.py:563") a module with no
        distributed code of its own calls one of `functions` from one of its top-level functions
        or classes that a distributed module calls (or builds) on every rank: the helper runs in
        the ranks one module further away (`training_state.load_state` called by the `Trainer`
        of trainer.py, which the training script builds in each rank). Up to two such modules
        in a row (train.py -> engine.py -> runner.py -> the helper), no more."""
        direct = self.rank_callers(path, functions)
        if direct:
            return direct
        path = self._real_path(path)
        found: list[str] = []
        for name in sorted(functions):
            key = (path, name)
            if key not in self._relayed_callers:
                self._relayed_callers[key] = self._find_relayed_callers(path, name)
            found.extend(place for _, place in self._relayed_callers[key])
        return found

    def _find_relayed_callers(self, path: str, name: str, relays: int = _MAX_RELAYS) -> list[tuple[str, str]]:
        targets, modules = self._modules_calling(path, name)
        places: list[tuple[str, str]] = []
        for relay, data in modules:
            for target, entries in self._relayed_calls(relay, data).items():
                if target not in targets:
                    continue
                for entry, place in sorted(entries.items()):
                    outers = self.rank_callers(relay, {entry})
                    if not outers and relays > 1:  # the relay's own callers may be relays too
                        outers = [outer for _, outer in self._find_relayed_callers(relay, entry, relays - 1)]
                    places.extend((relay, f"{outer} -> {place}") for outer in outers)
        return places

    def _relayed_calls(self, relay: str, data: bytes) -> dict[tuple[str, str], dict[str, str]]:
        """(project file, function) -> {top-level function or class of `relay` reaching the call:
        "engine.py:40"} for a module with no distributed code that is not a script; worked out
        once per module."""
        from ddplint.analysis.distributed import is_script

        known = self._relays.get(relay)
        if known is None:
            model = self._caller_model(relay, data)
            try:
                usable = model is not None and not model.distributed and not is_script(model.facts)
                known = _relay_calls_of(self, relay, model) if usable and model is not None else {}
            except Exception:  # RecursionError, or a bug: that module relays nothing, the run goes on
                known = {}
            self._relays[relay] = known
        return known

    def rank_callers_choose_device(self, path: str, functions: AbstractSet[str]) -> Optional[bool]:
        """Whether a module that calls one of `functions` on every rank (`rank_callers`) makes a
        CUDA device current itself or through the project helpers it calls, or places on the
        current device itself, where DDP005 reports it (DeviceModel.chooses_device_or_is_reported);
        None when no module does call them."""
        callers = sorted({caller for caller, _ in self._rank_calls_into(path, functions)})
        if not callers:
            return None
        return any(self._caller_sets_device(caller) for caller in callers)

    def _rank_calls_into(self, path: str, functions: AbstractSet[str]) -> list[tuple[str, str]]:
        path = self._real_path(path)
        found: list[tuple[str, str]] = []
        for name in sorted(functions):
            key = (path, name)
            if key not in self._rank_callers:
                self._rank_callers[key] = self._find_rank_callers(path, name)
            found.extend(self._rank_callers[key])
        return found

    def _caller_sets_device(self, caller: str) -> bool:
        known = self._sets_device.get(caller)
        if known is None:
            data = _caller_source(caller)
            model = self._caller_model(caller, data) if data is not None else None
            try:
                known = model is None or model.devices.chooses_device_or_is_reported
            except Exception:  # RecursionError, or a bug: taken as setting it, so nothing is reported
                known = True
            self._sets_device[caller] = known
        return known

    def caller_words(self, path: str) -> list[str]:
        """The module names a file's result depends on through other modules that import it
        or write its files (`rank_callers`, `saved_only_from_cpu`, `reads_the_project`): every module of the project
        once the file asked (any module may start calling it or writing the file), none
        otherwise. A results cache keys the file on them with its own imports."""
        path = self._real_path(path)
        if path not in self._read_the_project and not any(key[0] == path for key in (*self._rank_callers, *self._cpu_saves)):
            return []
        return sorted(name.decode("ascii", "replace") for name in self._names)

    def _find_rank_callers(self, path: str, name: str) -> list[tuple[str, str]]:
        targets, modules = self._modules_calling(path, name)
        places = []
        for caller, data in modules:
            for target, place in self._called_in_ranks(caller, data).items():
                if target in targets:
                    places.append((caller, place))
        return places

    def models_calling(self, path: str, name: str) -> Iterator["ModuleModel"]:
        """The models, each with its own view of the project, of the other modules that call
        function or class `name` of module `path` (by a name that imports it or its module)."""
        for caller, data in self._modules_calling(self._real_path(path), name)[1]:
            model = self._caller_model(caller, data)
            if model is not None:
                yield model

    def _modules_calling(self, path: str, name: str) -> tuple[set[tuple[str, str]], list[tuple[str, bytes]]]:
        """(the (file, name) pairs a call of function `name` of module `path` may resolve to,
        [(module, its source)] for each other module that calls something by that name and
        imports the function or its module)."""
        targets = {(path, name)} | {(init, name) for init in self._reexporters(path, name)}
        # `from helpers import setup` names the function; `import helpers as h` and `from pkg
        # import helpers` the module (`h.setup()`, `helpers.setup()`)
        package_init = os.path.join(os.path.dirname(path), "__init__.py")
        imports = targets | {(module, "") for module, _ in targets} | {(package_init, _module_name(path))}
        found = []
        for module in sorted(self.files - {path}):
            if name not in self._called_names(module):
                continue
            data = _caller_source(module)
            if data is not None and imports & set(self.imported_targets(module, data)):
                found.append((module, data))
        return targets, found

    def _called_names(self, path: str) -> frozenset[str]:
        """The names a module calls by (`restore(` / `ckpt.restore(`), read off its bytes once
        per index: most modules never call a given helper and are not read again for it."""
        known = self._calls_named.get(path)
        if known is None:
            self._stamps.setdefault(path, _stamp(path))  # forget_changed then sees it change
            data = _caller_source(path)
            found = _CALLED_NAME.findall(data) if data is not None else []
            words = {word for pair in found for word in pair if word}
            known = self._calls_named[path] = frozenset(word.decode("ascii", "replace") for word in words)
        return known

    def _called_in_ranks(self, caller: str, data: bytes) -> dict[tuple[str, str], str]:
        """(project file, function) -> "train.py:194" for each project function a distributed
        module calls from code every rank runs; worked out once per module."""
        known = self._rank_calls.get(caller)
        if known is None:
            model = self._caller_model(caller, data)
            try:
                known = _rank_calls_of(self, caller, model) if model is not None and model.distributed else {}
            except Exception:  # RecursionError, or a bug: that caller says nothing, the run goes on
                known = {}
            self._rank_calls[caller] = known
        return known

    def _reexporters(self, path: str, name: str) -> list[str]:
        """The package `__init__.py` files above `path` that import `name` from it."""
        found = []
        folder = os.path.dirname(path)
        while folder and folder != os.path.dirname(folder):
            init = os.path.join(folder, "__init__.py")
            if init != path and init in self.files:
                try:
                    data = read_file(init)
                except OSError:
                    data = b""
                if (path, name) in self.imported_targets(init, data):
                    found.append(init)
            folder = os.path.dirname(folder)
        return found

    def _caller_model(self, caller: str, data: bytes) -> Optional["ModuleModel"]:
        """The caller's model, with its own view of the project (its process group may be
        started by a helper of a third module)."""
        import libcst as cst

        from ddplint.analysis.facts import build_facts
        from ddplint.analysis.model import ModuleModel
        from ddplint.analysis.syntax import parse_module

        if not self._parses_safely(data, caller):
            return None
        try:
            module = parse_module(data)
            return ModuleModel(build_facts(module, data.decode(module.encoding, errors="replace"), self.view_for(caller)))
        except (RecursionError, MemoryError, cst.ParserSyntaxError, ValueError):
            return None

    def module_model(self, path: str) -> Optional["ModuleModel"]:
        """The model of one project module (without a project view of its own), parsed once while
        the file is unchanged; None when it cannot be read, is too large, or does not parse
        safely. For questions a summary does not record (which buffers a model module declares)."""
        from ddplint.analysis.model import ModuleModel

        stamp = _stamp(path)
        known = self._module_models.get(path)
        if known is not None and known[0] == stamp:
            return known[1]
        data = _caller_source(path)
        model = None
        if data is not None and self._parses_safely(data, path):
            facts = summaries.facts_of(data)
            model = ModuleModel(facts) if facts is not None else None
        self._module_models[path] = (stamp, model)
        return model

    def functions_naming(self, path: str, words: tuple[bytes, ...]) -> frozenset[str]:
        """The module-level functions of the module at `path` whose code (nested code included)
        names one of the lower-case `words` in a name or a string constant, read off CPython's
        compiled code: a screen in front of `module_model` for questions only such a function can
        answer yes to (whether a helper returns a rank test), which most functions called in an
        `if` are not, and each would cost its module a libcst parse and a model kept for the run."""
        stamp = _stamp(path)
        known = self._functions_naming.get((path, words))
        if known is not None and known[0] == stamp:
            return known[1]
        data = _caller_source(path)
        code = summaries.compiled(data, path) if data is not None else None
        naming = frozenset(
            const.co_name for const in (code.co_consts if code is not None else ())
            if isinstance(const, CodeType) and _code_names_a_word(const, words)
        )
        self._functions_naming[(path, words)] = (stamp, naming)
        return naming

    def forget_module_models(self) -> None:
        """Drop the models `module_model` keeps. A batch run calls this after each file: a model
        holds its module's whole tree, and keeping every model some file asked for held torch's
        run ~30 MB higher to its end; a later file that asks again pays a parse instead."""
        self._module_models.clear()

    def module_facts(self, path: str) -> Optional["ModuleFacts"]:
        """The records of `module_model(path)`."""
        model = self.module_model(path)
        return model.facts if model is not None else None

    def reads_the_project(self, path: str) -> None:
        """The answer for the module at `path` depends on what other modules of the project
        call or save (`caller_words` then names them all)."""
        self._read_the_project.add(self._real_path(path))

    def some_module_matches(self, path: str, *patterns: re.Pattern) -> bool:
        """Whether the text of any module of the project (the asking one at `path` included)
        matches one of `patterns`, an unreadable module counting as a match; the asking file's
        result then depends on every module (`reads_the_project`). Read once per index."""
        self.reads_the_project(path)
        key = tuple(pattern.pattern for pattern in patterns)
        known = self._text_matches.get(key)
        if known is None:
            known = self._text_matches[key] = any(_matches_any(module, patterns) for module in sorted(self.files))
        return known

    def path_of(self, model: "ModuleModel") -> Optional[str]:
        """The path of a module whose model `module_model` made (None for any other model)."""
        return next((path for path, (_, known) in self._module_models.items() if known is model), None)

    def saved_only_from_cpu(self, path: str, names: AbstractSet[str]) -> bool:
        """Whether the modules that import this one (the training script that calls the
        evaluation helper after it saved its model) write files of these names
        (`model_final.pth`), and every `torch.save` there that does writes CPU tensors
        (analysis/checkpoints.py): the helper reads back what its caller wrote."""
        key = (self._real_path(path), frozenset(names))
        if key not in self._cpu_saves:
            self._cpu_saves[key] = self._only_cpu_saves(key[0], names)
        return self._cpu_saves[key]

    def _only_cpu_saves(self, path: str, names: AbstractSet[str]) -> bool:
        from ddplint.analysis.checkpoints import saves_cpu_tensors, saves_of
        from ddplint.analysis.model import ModuleModel

        literals = [name.encode() for name in names]
        found = False
        for other in sorted(self.files - {path}):
            if "save" not in self._called_names(other):
                continue  # writes nothing with torch.save
            data = _caller_source(other)
            if data is None or not any(literal in data for literal in literals):
                continue
            if not any(target == path for target, _ in self.imported_targets(other, data)):
                continue
            facts = summaries.facts_of(data) if self._parses_safely(data, other) else None
            model = ModuleModel(facts) if facts is not None else None
            try:
                saves = [saves_cpu_tensors(model, save) for save in saves_of(model, set(names))] if model else None
            except Exception:  # RecursionError, or a bug: that module's saves are unknown
                saves = None
            if saves is None or not all(saves):
                return False  # a module that may write the file from the GPU, or cannot be read
            found = found or bool(saves)
        return found


def _rank_calls_of(index: ProjectIndex, caller: str, model: "ModuleModel") -> dict[tuple[str, str], str]:
    """ProjectIndex._called_in_ranks for a distributed module's model."""
    facts = model.facts
    first: dict[tuple[str, str], "cst.CSTNode"] = {}
    for site in facts.calls:
        targets = _call_targets(index, caller, facts, site)
        if not targets or set(first).issuperset(targets):
            continue
        if model.where.call_in_a_rank(site) and not model.ranks.call_runs_on_one_rank_only(site):
            for target in targets:
                first.setdefault(target, site.node)
    if not first:
        return {}
    from ddplint.positions import positions_of

    lines = positions_of(facts.module, list(first.values()))
    return {target: f"{os.path.basename(caller)}:{lines[node].start.line}" for target, node in first.items()}


def _call_targets(index: ProjectIndex, importer: str, facts: "ModuleFacts", site: "CallSite") -> set[tuple[str, str]]:
    """The project functions and classes a call may run: what its qualified names resolve to;
    for a classmethod or static method called on a project class (`Net.from_pretrained(path)`),
    the class, whose methods count as run as when the class is built."""
    import libcst as cst

    targets = set()
    for qualified in facts.qualified_names(site.node.func):
        target = index.resolve(importer, qualified)
        if target is None and isinstance(site.node.func, cst.Attribute) and qualified.count(".") >= 2:
            owner = index.resolve(importer, qualified.rsplit(".", 1)[0])
            method = site.node.func.attr.value
            target = owner if owner is not None and owner[1] and index.defines_class_method(*owner, method) else None
        if target is not None:
            targets.add(target)
    return targets


def top_level_entries(facts: "ModuleFacts", predicate: Callable[["CallSite"], bool]) -> set[str]:
    """The names other modules reach a call satisfying `predicate` by: the top-level functions
    of the file making it (or reaching it through the file's own calls), and the top-level
    classes whose methods do (building the class counts as running them all)."""
    entries: set[str] = set()
    for function in facts.functions_reaching(predicate):
        if function.class_name is None and function.scope.parent is facts.module_scope:
            entries.add(function.name)
        elif function.class_name is not None and _top_level_class(facts, function.class_name):
            entries.add(function.class_name)
    return entries


def _top_level_class(facts: "ModuleFacts", name: str) -> bool:
    info = facts.classes.get(name)
    return info is not None and any(statement is info.node for statement in facts.module.body)


def _relay_calls_of(index: ProjectIndex, relay: str, model: "ModuleModel") -> dict[tuple[str, str], dict[str, str]]:
    """ProjectIndex._relayed_calls for the model of a module with no distributed code: its calls
    of project functions that are not confined to one rank or to the single-process path, each
    with the module's entries that reach it."""
    facts = model.facts
    by_target: dict[tuple[str, str], list["cst.CSTNode"]] = {}
    for site in facts.calls:
        targets = _call_targets(index, relay, facts, site)
        if targets and model.where.call_in_a_rank(site) and not model.ranks.call_runs_on_one_rank_only(site):
            for target in targets:
                by_target.setdefault(target, []).append(site.node)
    if not by_target:
        return {}
    from ddplint.positions import positions_of

    lines = positions_of(facts.module, [node for nodes in by_target.values() for node in nodes])
    found: dict[tuple[str, str], dict[str, str]] = {}
    for target, nodes in by_target.items():
        place = f"{os.path.basename(relay)}:{lines[nodes[0]].start.line}"
        found[target] = dict.fromkeys(top_level_entries(facts, _is_call_of_any(nodes)), place)
    return found


def _chosen_by_name(func: "cst.BaseExpression") -> Optional[tuple["cst.BaseExpression", str]]:
    """(module, name prefix) of `getattr(module, "prefix_%s" % x)` (also `"prefix_" + x`,
    `f"prefix_{x}"`, `"prefix_{}".format(x)`); the prefix must name something (not empty)."""
    import libcst as cst

    from ddplint.analysis.syntax import string_value

    if not (isinstance(func, cst.Call) and isinstance(func.func, cst.Name) and func.func.value == "getattr"):
        return None
    if len(func.args) < 2:
        return None
    name = func.args[1].value
    prefix: Optional[str] = None
    if isinstance(name, cst.Call) and isinstance(name.func, cst.Attribute) and name.func.attr.value == "format":
        written = string_value(name.func.value)
        prefix = written.split("{", 1)[0] if written is not None else None
    elif isinstance(name, cst.BinaryOperation) and isinstance(name.operator, (cst.Modulo, cst.Add)):
        written = string_value(name.left)
        prefix = written.split("%", 1)[0] if written is not None else None
    elif isinstance(name, cst.FormattedString) and name.parts and isinstance(name.parts[0], cst.FormattedStringText):
        prefix = name.parts[0].value
    return (func.args[0].value, prefix) if prefix else None


def _is_call_of_any(nodes: list["cst.CSTNode"]) -> Callable[["CallSite"], bool]:
    chosen = {id(node) for node in nodes}
    return lambda call: id(call.node) in chosen


# `restore(`, `ckpt.restore(`, and the class of `Net.from_pretrained(` (its method is called)
_CALLED_NAME = re.compile(rb"(?<![\w])([A-Za-z_]\w*)\s*\(|(?<![\w])([A-Za-z_]\w*)(?=\.[A-Za-z_]\w*\s*\()")


def _caller_source(path: str) -> Optional[bytes]:
    """A module's source when it can be analysed (the engine's size limit), else None."""
    try:
        data = read_file(path)
    except OSError:
        return None
    return data if len(data) <= MAX_ANALYSED_BYTES else None


def _code_names_a_word(code: CodeType, words: tuple[bytes, ...]) -> bool:
    """Whether a code object or one nested in it names one of the lower-case `words` (a name, an
    attribute, a local, or a string constant such as an environment key)."""
    stack = [code]
    while stack:
        current = stack.pop()
        texts = [*current.co_names, *current.co_varnames, *current.co_cellvars, *current.co_freevars]
        texts += [const for const in current.co_consts if isinstance(const, str)]
        if any(word in text.lower().encode() for text in texts for word in words):
            return True
        stack.extend(const for const in current.co_consts if isinstance(const, CodeType))
    return False


def _stamp(path: str) -> Optional[tuple[int, int]]:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns




_Value = TypeVar("_Value")


class SharedSummaries:
    """What worker processes of one run have worked out about project modules, kept as one
    pickle per module and kind in `directory`: a directory the run created for itself alone
    (tempfile.mkdtemp) and removes at its end, so nothing read here comes from anyone else.
    Without a directory, nothing is shared (one process on its own)."""

    def __init__(self, directory: Optional[str]) -> None:
        self.directory = directory

    def _file(self, kind: str, path: str) -> str:
        assert self.directory is not None
        return os.path.join(self.directory, f"{hashlib.sha1(os.fsencode(path)).hexdigest()}.{kind}")

    def load(self, kind: str, path: str) -> Optional[tuple[Any]]:
        """(value,) if some process of the run saved one, else None."""
        if self.directory is None:
            return None
        try:
            with open(self._file(kind, path), "rb") as handle:
                return (pickle.load(handle),)
        except (OSError, EOFError, pickle.UnpicklingError):  # not there yet (or the run is ending)
            return None

    def saved(self, kind: str, path: str, value: _Value) -> _Value:
        """`value`, after leaving it for the other processes. Written whole under a name of this
        process's own, then renamed: a reader sees all of it or nothing."""
        if self.directory is not None:
            target = self._file(kind, path)
            partial = f"{target}.{os.getpid()}"
            try:
                with open(partial, "wb") as handle:
                    pickle.dump(value, handle, protocol=pickle.HIGHEST_PROTOCOL)
                os.replace(partial, target)
            except OSError:  # a full disk costs the others a recomputation, never a result
                pass
        return value

    @contextmanager
    def claim(self, path: str) -> Iterator[None]:
        """Held while this process computes a module's summary: another that needs the same one
        meanwhile waits for it instead of parsing the module too. A kernel lock (flock), so a
        worker that dies lets go of it; where there is none (Windows), workers may both compute."""
        descriptor = self._lock_file(path)
        if descriptor is None:
            yield
            return
        import fcntl

        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX)
            yield
        finally:
            os.close(descriptor)  # and with it the lock

    def _lock_file(self, path: str) -> Optional[int]:
        if self.directory is None or os.name != "posix":
            return None
        try:
            return os.open(self._file("lock", path), os.O_CREAT | os.O_RDWR, 0o600)
        except OSError:
            return None


_NOT_SHARED = SharedSummaries(None)


class SummaryStore(Protocol):
    """Where summaries and outlines outlive a run (the results cache folder: ddplint/cache.py
    implements it). Values are plain JSON (`summary_to_json`, `outline_to_json`), kept per
    `kind` and module content: what a store hands back is decoded strictly, and anything that does
    not decode is worked out again."""

    def load(self, kind: str, data: bytes) -> Any:
        """The value kept for this kind and content; None if there is none."""

    def save(self, kind: str, data: bytes, value: Any) -> None:
        """Keep `value` for this kind and content (failures are the store's to swallow)."""


class _NoStore:
    def load(self, kind: str, data: bytes) -> Any:
        return None

    def save(self, kind: str, data: bytes, value: Any) -> None:
        pass


_NO_STORE: SummaryStore = _NoStore()






def _from_import_bindings(statement: bytes) -> list[tuple[str, str, bool]]:
    """(local name, what the module would resolve it as, through a star) for a `from` import:
    `from .build import make_loader` -> [("make_loader", ".build.make_loader", False)], `from
    .build import loader as name` -> [("name", ".build.loader", False)], `from .build import *`
    -> [("*", ".build.", True)] (the prefix: a name is there only if build.py has it)."""
    try:
        tree = ast.parse(statement.decode("utf-8", "replace").strip())
    except (SyntaxError, ValueError):
        return []
    out: list[tuple[str, str, bool]] = []
    for node in tree.body:
        if not isinstance(node, ast.ImportFrom):
            continue
        module = "." * node.level + (node.module or "")
        prefix = module if module.endswith(".") else module + "."
        for alias in node.names:
            if alias.name == "*":
                out.append(("*", prefix, True))
            else:
                out.append((alias.asname or alias.name, f"{prefix}{alias.name}", False))
    return out


def _imported_names(statement: bytes) -> list[str]:
    """`from .data import a, b as c` -> [".data.a", ".data.b"]; `import x.y as z` -> ["x.y"]."""
    try:
        tree = ast.parse(statement.decode("utf-8", "replace").strip())
    except (SyntaxError, ValueError):
        return []
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            names.extend(f"{module}.{alias.name}" if module.rstrip(".") else f"{module}{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
    return names


# How many modules deep `from a import *` -> `from b import *` -> ... is followed.
_STAR_IMPORT_DEPTH = 4


def _import_bindings(statement: bytes) -> list[tuple[str, str]]:
    """(local name, qualified name) of each name an import statement binds: `import torch.nn as
    nn` -> ("nn", "torch.nn"), `import torch.nn` -> ("torch", "torch"), `from .a import *` ->
    ("*", ".a")."""
    try:
        tree = ast.parse(statement.decode("utf-8", "replace").strip())
    except (SyntaxError, ValueError):
        return []
    found: list[tuple[str, str]] = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                head = alias.name.split(".")[0]
                found.append((alias.asname, alias.name) if alias.asname else (head, head))
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            for alias in node.names:
                if alias.name == "*":
                    found.append(("*", module))
                else:
                    separator = "" if module.endswith(".") else "."
                    found.append((alias.asname or alias.name, f"{module}{separator}{alias.name}"))
    return found


def _matches_any(path: str, patterns: tuple[re.Pattern, ...]) -> bool:
    try:
        data = read_file(path)
    except OSError:
        return True
    return any(pattern.search(data) for pattern in patterns)


def _common_root(files: set[str]) -> Optional[Path]:
    """The folder all `files` (real paths) lie under. Their folders first, a few hundred for a
    package of thousands of files: a Path per file was ~10 ms per 1,000 files, paid by the
    language server each time it lists a workspace's modules again."""
    if not files:
        return None
    return Path(os.path.commonpath({os.path.dirname(f) for f in files}))


def _within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


class ProjectView:
    """The project as one file sees it: the summaries behind the names it imports."""

    def __init__(self, index: ProjectIndex, path: str) -> None:
        self.index = index
        self.path = path
        # id(callee) -> (callee, its target): the models ask about every call of a file, one
        # question each (a factory? a loader class? a generator? ...). The node is kept so that
        # its id is not reused.
        self._targets: dict[int, tuple[object, Optional[tuple[ModuleSummary, str]]]] = {}

    def _target(self, facts: "ModuleFacts", func: cst.BaseExpression) -> Optional[tuple[ModuleSummary, str]]:
        known = self._targets.get(id(func))
        if known is None or known[0] is not func:
            known = self._targets[id(func)] = (func, self._find_target(facts, func))
        return known[1]

    def _find_target(self, facts: "ModuleFacts", func: cst.BaseExpression) -> Optional[tuple[ModuleSummary, str]]:
        for qualified in facts.qualified_names(func):
            resolved = self.index.resolve(self.path, qualified)
            if resolved is None:
                continue
            summary = self.index.summary_for(*resolved)
            if summary is not None:
                return summary, resolved[1]
        return None

    def star_exports(self, module: str) -> dict[str, frozenset[str]]:
        return self.index.star_exports(self.path, module)

    def loader_factory(self, facts: "ModuleFacts", site: "CallSite") -> Optional[FactoryLoader]:
        """What a project function returns, or a method of a project class called on an instance
        the file builds (`data = DataModule(cfg)`, then `data.train_loader()`) or holds from a
        parameter annotated with the class (`data: DataModule`), as a loader."""
        target = self._target(facts, site.node.func)
        if target is not None:
            return target[0].loader_factories.get(target[1])
        from ddplint.analysis.loaders import receiver_class

        built = receiver_class(site)
        target = self._target(facts, built) if built is not None else None
        if target is None:
            return None
        return target[0].loader_factories.get(f"{target[1]}.{site.name}")

    def starts_process_group(self, facts: "ModuleFacts", site: "CallSite") -> bool:
        target = self._target(facts, site.node.func)
        if target is not None:
            return target[1] in target[0].process_group_starters
        chosen = self._chosen_by_name(facts, site.node.func)  # every one the name may pick starts it
        return bool(chosen) and all(name in summary.process_group_starters for summary, name in chosen)

    def launches_processes(self, facts: "ModuleFacts", site: "CallSite") -> bool:
        """The call spawns workers that run the other module's code; this process stays out."""
        target = self._target(facts, site.node.func)
        return target is not None and target[1] in target[0].process_launchers

    def sets_device(self, facts: "ModuleFacts", site: "CallSite") -> bool:
        """The call sets the device per rank: a project function that does, or `mp.spawn` of one
        (`torch.multiprocessing.spawn(mpu.run, ...)` where `run` calls set_device)."""
        if self._function_sets_device(facts, site.node.func):
            return True
        names = facts.qualified_names(site.node.func)
        spawned = site.node.args[0].value if site.node.args else None
        return spawned is not None and not names.isdisjoint(SPAWNERS) and self._function_sets_device(facts, spawned)

    def _function_sets_device(self, facts: "ModuleFacts", func: cst.BaseExpression) -> bool:
        target = self._target(facts, func)
        if target is not None:
            return target[1] in target[0].device_setters
        chosen = self._chosen_by_name(facts, func)  # every one the name may pick sets it
        return bool(chosen) and all(name in summary.device_setters for summary, name in chosen)

    def device_parameters(self, facts: "ModuleFacts", site: "CallSite") -> list[tuple[dict[str, int], bool]]:
        """For each project function the call may run: ({parameter: position} of the parameters
        it picks the rank's GPU with (`ModuleSummary.device_parameters`), whether it starts the
        process group)."""
        target = self._target(facts, site.node.func)
        candidates = [target] if target is not None else self._chosen_by_name(facts, site.node.func)
        return [
            (summary.device_parameters[name], name in summary.process_group_starters)
            for summary, name in candidates
            if name in summary.device_parameters
        ]

    def _chosen_by_name(self, facts: "ModuleFacts", func: cst.BaseExpression) -> list[tuple[ModuleSummary, str]]:
        """The functions of a project module that a call of `getattr(dist_utils, "init_dist_%s"
        % launcher)` may run: those its summary records whose name starts with the written
        prefix (the rest of the name is only known at run time)."""
        chosen = _chosen_by_name(func)
        if chosen is None:
            return []
        module, prefix = chosen
        for qualified in facts.qualified_names(module):
            found = self.index.resolve(self.path, qualified)
            if found is None:
                continue
            summary = self.index.summary(found[0]) if not found[1] else None
            if summary is None:
                return []
            return [(summary, name) for name in sorted(summary.offered_names()) if name.startswith(prefix)]
        return []

    def returns_current_device(self, facts: "ModuleFacts", call: "cst.Call") -> bool:
        """The project function `call` calls returns the current CUDA device as a value
        (`ModuleSummary.current_device_returners`)."""
        target = self._target(facts, call.func)
        return target is not None and target[1] in target[0].current_device_returners

    def current_device_work(self, facts: "ModuleFacts", site: "CallSite", instance_of: Optional[cst.Call] = None) -> Optional[str]:
        """Where ("trainer.py:12") the project function or class the call runs works on the
        current CUDA device (`ModuleSummary.current_device_work`), if it does; with `instance_of`
        (the call that built the receiver), the method of that project class the call runs."""
        import libcst as cst

        if instance_of is None:
            target = self._target(facts, site.node.func)
            return target[0].current_device_work.get(target[1]) if target else None
        target = self._target(facts, instance_of.func)
        method = site.node.func.attr.value if isinstance(site.node.func, cst.Attribute) else None
        return target[0].current_device_work.get(f"{target[1]}.{method}") if target and method else None

    def collective(self, facts: "ModuleFacts", site: "CallSite", false_here: AbstractSet[int] = frozenset()) -> Optional[CollectiveReach]:
        """The collective a project function makes when called (`reduce_mean` -> all_reduce).
        `false_here`: the call's arguments known false where it is made (CollectiveReach.skipped_at)."""
        for qualified in facts.qualified_names(site.node.func):
            resolved = self.index.resolve(self.path, qualified)
            if resolved is None:
                continue
            path, name = resolved
            summary = self.index.summary_for(path, name)
            if summary is not None and name in summary.collectives:
                reach = summary.collectives[name]
                if reach.skipped_at(site.node, false_here):
                    return None  # `log_event(..., sync=False)`: the flag leaves the collective out
                return reach.through(site.name or name, Path(path).stem)
        return None

    def forwarded_parameters(self, facts: "ModuleFacts", site: "CallSite") -> dict[str, int]:
        """{parameter: position} of the project function the call calls, for the parameters it
        runs forward on as a module (`evaluate(model, loader)` calling `model(x)`)."""
        target = self._target(facts, site.node.func)
        return target[0].forwarded_parameters.get(target[1], {}) if target else {}

    def epoch_setter(self, facts: "ModuleFacts", site: "CallSite") -> Optional[tuple[str, int]]:
        """(parameter, position) a project function calls `set_epoch` on, if it does."""
        target = self._target(facts, site.node.func)
        return target[0].epoch_setters.get(target[1]) if target else None

    def loader_class(self, facts: "ModuleFacts", func: cst.BaseExpression) -> Optional[bool]:
        """None if `func` is not a project DataLoader subclass, else whether it picks its samples."""
        target = self._target(facts, func)
        return target[0].loader_classes.get(target[1]) if target else None

    def pass_repeater(self, facts: "ModuleFacts", site: "CallSite") -> Optional[PassRepeater]:
        target = self._target(facts, site.node.func)
        return target[0].pass_repeaters.get(target[1]) if target else None

    def loader_trainer(
        self, facts: "ModuleFacts", site: "CallSite", instance_of: Optional[cst.BaseExpression], stored: bool = False
    ) -> Optional[LoaderTrainer]:
        """What a project function, or (`instance_of` the class called to build the receiver)
        a method of a project class, does as a loader trainer, if it is one. `stored`: the
        method trains on what the class's constructor stored (its parameter is the constructor's)."""
        import libcst as cst

        func = site.node.func
        if instance_of is None:
            target = self._target(facts, func)
            return target[0].loader_trainers.get(target[1]) if target else None
        target = self._target(facts, instance_of)
        if target is None or not isinstance(func, cst.Attribute):
            return None
        table = target[0].stored_loader_trainers if stored else target[0].loader_trainers
        return table.get(f"{target[1]}.{func.attr.value}")

    def unsharded_sampler_places(self, facts: "ModuleFacts", call: cst.Call) -> tuple[frozenset[int], frozenset[int]]:
        """`LoaderModel.unsharded_sampler_places` of the project function `call` calls."""
        target = self._target(facts, call.func)
        return target[0].unsharded_samplers.get(target[1], _NO_PLACES) if target else _NO_PLACES

    def loader_kwargs(self, facts: "ModuleFacts", call: cst.Call) -> Optional[LoaderKwargs]:
        target = self._target(facts, call.func)
        return target[0].loader_kwargs.get(target[1]) if target else None

    def sampler_factory(self, facts: "ModuleFacts", site: "CallSite") -> Optional[str]:
        """Where the shuffling DistributedSampler a project function returns is built, if it does."""
        target = self._target(facts, site.node.func)
        return target[0].sampler_factories.get(target[1]) if target else None

    def distributed_class(self, facts: "ModuleFacts", func: cst.BaseExpression) -> Optional[str]:
        """The torch class (DistributedSampler, DistributedDataParallel, ...) that the project
        class `func` names extends, if it is one."""
        target = self._target(facts, func)
        return target[0].distributed_classes.get(target[1]) if target else None

    def rank_callers(self, facts: "ModuleFacts", functions: AbstractSet[str]) -> list[str]:
        """Where other modules of the project call these top-level functions of this file on
        every rank (ProjectIndex.rank_callers)."""
        return self.index.rank_callers(self.path, functions)

    def rank_callers_through_a_module(self, facts: "ModuleFacts", functions: AbstractSet[str]) -> list[str]:
        """ProjectIndex.rank_callers_through_a_module for top-level functions of this file."""
        return self.index.rank_callers_through_a_module(self.path, functions)

    def rank_callers_choose_device(self, facts: "ModuleFacts", functions: AbstractSet[str]) -> Optional[bool]:
        """ProjectIndex.rank_callers_choose_device for top-level functions of this file."""
        return self.index.rank_callers_choose_device(self.path, functions)

    def saved_only_from_cpu(self, names: AbstractSet[str]) -> bool:
        """Other modules write files of these names, from CPU tensors only."""
        return self.index.saved_only_from_cpu(self.path, names)

    def iterable_class(self, facts: "ModuleFacts", func: cst.BaseExpression) -> Optional[bool]:
        """None if `func` is not a project IterableDataset class, else whether it splits its stream."""
        target = self._target(facts, func)
        return target[0].iterable_classes.get(target[1]) if target else None
