"""Cross-module flow: what the project's own modules export, for the files that import them.

A training script often gets its
loader, sampler, dataset class or process-group set-up from a sibling module
(`from .data import build_loader`, `from utils import init_distributed`). Each module is
summarised once, from its own source only (`ModuleSummary`): which of its top-level functions
return a DataLoader and with what sampler (or a shuffling DistributedSampler, or DataLoader keyword
arguments), which re-iterate a parameter pass after pass (an endless generator), which start the
process group or set the CUDA device, which DataLoader subclasses pick their own samples, which
IterableDataset classes split their stream. A file's analysis then reads the summaries of
the project modules it imports directly (`ProjectView`).

Because a summary depends on one file's content only, a file's result depends on its own content
plus the content of the project files it imports directly: `ProjectIndex.dependencies(path)`
lists them, so a result cache can key on all of them. Nothing is transitive on purpose: a summary
never reads another summary, so there is no cycle and no order to get right. The one exception
reads import lines only: what `from models import *` hands on (models.py's own imports, and
those of the modules it star-imports in turn, `ProjectIndex.star_exports`); those files are
dependencies too.

Worker processes checking files of the same run share what they work out about modules through a
run-private directory (`SharedSummaries`): a module's summary (and its outline) is computed by the
first worker that needs it and read by the others, instead of each parsing the module again.

The index holds every module of the project a checked file belongs to (`project_root`: the
nearest folder with pyproject.toml, ddplint.toml, setup.cfg, setup.py or .git; discovery.project_modules
walks it), not only the files named: `ddplint .`, `ddplint FILE`, stdin, --fix and the language
server give a file the same findings.

The static side never imports or runs the project's code; the modules are parsed like any file.
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import hashlib
import inspect
import os
import pickle
import re
import types
import typing
import warnings
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
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

from ddplint.analysis.search_path import added_folders
from ddplint.analysis.torch_api import (
    ACCELERATOR_COLLECTIVES,
    BARRIER_COLLECTIVES,
    BROADCAST_COLLECTIVES,
    COLLECTIVES,
    DATALOADER,
    DISTRIBUTED_ENTRY_POINTS,
    DISTRIBUTED_SAMPLER,
    ITERABLE_DATASETS,
    PROCESS_GROUP_STARTERS,
    SET_DEVICE,
    SPAWNERS,
    WRAPPER_CLASS_NAMES,
)
from ddplint.source import MAX_ANALYSED_BYTES, read_file

# libcst is imported by the functions that summarise a module, not here: a run whose files are
# all cached still builds the index (the cache asks it which files a file imports).
if TYPE_CHECKING:
    import libcst as cst

    from ddplint.analysis.facts import CallSite, ModuleFacts
    from ddplint.analysis.loaders import SamplerKind
    from ddplint.analysis.records import CollectiveReach

# `from .data import build_loader` / `import utils, data`: the module part of import statements.
# Whole import statements, parenthesised ones across lines: read without parsing the file.
_IMPORT_STATEMENT = re.compile(
    rb"(?m)^[ \t]*(?:from[ \t]+\.*[\w.]*[ \t]+import[ \t]*\([^)]*\)|from[ \t]+\.*[\w.]*[ \t]+import[^\n;#]*|import[ \t][^\n;#]*)"
)
# `def name` / `class name` anywhere in a module (a re-export is followed only past a module
# that does not define the name itself).
_DEFINED_NAME = re.compile(rb"(?m)^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+(\w+)")
_IMPORTED_NAMES = re.compile(rb"(?m)^[ \t]*((?:from[ \t]+[\w.]+[ \t]+)?import[ \t(]+[^\n]*)")
_SAMPLER_CLASS_NAMES = frozenset(name.rsplit(".", 1)[-1] for name in DISTRIBUTED_SAMPLER)


# What a module must call (or subclass) to offer anything in its summary: loaders, samplers and
# streaming datasets, process-group and device set-up, set_epoch, collectives, generators. Modules
# without such a call are never parsed for their summary: in a large library almost every module
# is imported by some file, and only a few build loaders or start process groups.

def _summary_words() -> re.Pattern:
    calls = sorted(
        {"DataLoader", "init_process_group", "start_processes", "spawn", "init_distributed", "set_device", "device",
         "set_epoch"} | COLLECTIVES | BROADCAST_COLLECTIVES | BARRIER_COLLECTIVES | ACCELERATOR_COLLECTIVES
        | _SAMPLER_CLASS_NAMES | WRAPPER_CLASS_NAMES,
        key=lambda word: (-len(word), word),
    )
    return re.compile(
        rb"(?<![\w])(?:" + b"|".join(re.escape(word).encode() for word in calls) + rb")\s*\("
        rb"|\(\s*[\w.]*(?:IterableDataset|IterDataPipe|WebDataset|IterableWrapper|DataLoader|"
        + b"|".join(re.escape(name).encode() for name in sorted(_SAMPLER_CLASS_NAMES | WRAPPER_CLASS_NAMES))
        + rb")\s*[,)]"
    )


# The collective words come from torch_api (one list): a helper making any collective is summarised.
_SUMMARY_WORDS = _summary_words()
# A module without those words may still hold a generator that re-iterates the loader it is
# given (`while True: yield from loader`): only its generator functions can then be recorded.
_GENERATOR_WORD = re.compile(rb"(?<![\w])yield(?![\w])")


def _summary_evidence() -> re.Pattern:
    """Text without which a summary records nothing, whatever the module calls. Every entry of a
    summary comes from a call or a base class with a qualified name (imports.py builds those from
    the module's own text, and `canonical()` never adds these words): DataLoader and
    DistributedSampler classes, `set_epoch`, iterable dataset classes, `yield` (a generator
    re-iterating a loader), process-group starters and spawners
    (`torch.distributed`, `torch.multiprocessing`, `deepspeed`), device setters (`torch.cuda`),
    collectives (`torch.distributed`, an Accelerator, Lightning's trainer). tests/test_screen.py
    checks these words against the torch_api tables."""
    classes = {name.rsplit(".", 1)[-1] for name in DATALOADER | ITERABLE_DATASETS}
    words = sorted(
        classes | _SAMPLER_CLASS_NAMES | WRAPPER_CLASS_NAMES | {"set_epoch", "distributed", "multiprocessing", "deepspeed", "cuda", "lightning", "yield"}
    )
    return re.compile(b"|".join(re.escape(word).encode() for word in words) + rb"|(?i:accelerat)")


_SUMMARY_EVIDENCE = _summary_evidence()
# A module's function starts the process group for its callers only by calling a starter, itself
# or through functions of its module (`summarise`: the functions reaching PROCESS_GROUP_STARTERS),
# so the module's code names the starter.
_STARTER_NAMES = frozenset(name.rsplit(".", 1)[-1] for name in PROCESS_GROUP_STARTERS)
_STARTER_WORDS = tuple(sorted(name.encode() for name in _STARTER_NAMES))


# What marks a project's root, walking up from a checked file: the modules it imports may lie
# anywhere under that folder, whichever files ddplint was asked to check.
PROJECT_MARKERS = ("pyproject.toml", "ddplint.toml", "setup.cfg", "setup.py", ".git")


def project_root(path: str) -> Optional[str]:
    """The nearest folder at or above `path`'s own folder that holds a project marker; None when
    no folder up to the file system's root does (the project is then the files checked)."""
    folder = os.path.dirname(os.path.realpath(path))
    while True:
        if any(os.path.exists(os.path.join(folder, marker)) for marker in PROJECT_MARKERS):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


@dataclass(frozen=True)
class FactoryLoader:
    """A DataLoader a project function builds and returns."""

    where: str  # "data.py:12", for messages
    sampler: "SamplerKind"  # after the module's own exemptions
    shuffling_sampler: bool  # a shuffling DistributedSampler reaches it: set_epoch matters
    shuffle: Optional[bool]
    dataset_parameter: Optional[int]  # position of the factory parameter that becomes the dataset
    dataset_keyword: Optional[str]
    # The module is distributed on its own and trains on the loader there: rules judge it there,
    # and the importing file need not report it again.
    judged_there: bool = False


@dataclass(frozen=True)
class PassRepeater:
    """A generator that starts a new pass over what one parameter gives it on every turn of a
    loop (`while True: yield from loader`): called with a loader, it runs the epochs."""

    where: str  # "utils.py:3", the loop, for messages
    parameter: str
    position: int
    sets_epoch: bool  # it sets some epoch (`sampler.set_epoch(n)`) in that loop, a new one each turn


@dataclass(frozen=True)
class LoaderKwargs:
    """A dict of DataLoader keyword arguments a project function returns (`**loader_kwargs(...)`)."""

    where: str  # where its sampler is built ("data.py:7"), else the module's name
    keys: Optional[frozenset[str]]  # None when not all of them are known
    shuffling_sampler: bool  # its "sampler" entry is a shuffling DistributedSampler it builds


@dataclass
class ModuleSummary:
    """What one module offers to the modules that import it. Computed from its source alone."""

    process_group_starters: set[str] = field(default_factory=set)
    # Starters that only spawn worker processes running this module's own code (`launch()` ->
    # `mp.spawn(_worker, ...)`): the caller stays in the launcher process, one process.
    process_launchers: set[str] = field(default_factory=set)
    device_setters: set[str] = field(default_factory=set)
    loader_factories: dict[str, FactoryLoader] = field(default_factory=dict)
    iterable_classes: dict[str, bool] = field(default_factory=dict)  # class -> splits its stream
    # function -> (parameter name, position) it calls `set_epoch` on, directly or through
    # `.sampler` / `.batch_sampler` (`train_one_epoch(model, loader, epoch)` in an engine module)
    epoch_setters: dict[str, tuple[str, int]] = field(default_factory=dict)
    # function -> the collective every rank must reach when it is called (`reduce_mean` -> all_reduce)
    collectives: dict[str, CollectiveReach] = field(default_factory=dict)
    # DataLoader subclass -> whether it picks its own samples (hands super().__init__ a sampler,
    # or replaces __iter__)
    loader_classes: dict[str, bool] = field(default_factory=dict)
    pass_repeaters: dict[str, PassRepeater] = field(default_factory=dict)
    loader_kwargs: dict[str, LoaderKwargs] = field(default_factory=dict)
    # function -> where the shuffling DistributedSampler it builds and returns is built
    sampler_factories: dict[str, str] = field(default_factory=dict)
    # class -> the torch class of DISTRIBUTED_ENTRY_POINTS it extends (a project's own
    # DistributedSampler or DistributedDataParallel subclass, `torchft.DistributedSampler`)
    distributed_classes: dict[str, str] = field(default_factory=dict)


    def _tables(self) -> tuple:
        return (
            self.process_group_starters, self.device_setters, self.loader_factories, self.iterable_classes,
            self.epoch_setters, self.collectives, self.loader_classes, self.pass_repeaters, self.loader_kwargs,
            self.sampler_factories, self.distributed_classes,
        )

    def offered_names(self) -> set[str]:
        return {name for table in self._tables() for name in table}

    def offers_anything(self) -> bool:
        return any(self._tables())


def summarise(facts: "ModuleFacts", display_name: str) -> ModuleSummary:
    import libcst as cst

    summary = ModuleSummary()
    top_level = [f for f in facts.functions if f.class_name is None and f.scope.parent is facts.module_scope]
    starters = facts.functions_reaching(lambda s: not facts.qualified_names(s.node.func).isdisjoint(PROCESS_GROUP_STARTERS))
    setters = facts.functions_reaching(lambda s: not facts.qualified_names(s.node.func).isdisjoint(SET_DEVICE))
    summary.process_group_starters = {f.name for f in top_level if f in starters}
    summary.device_setters = {f.name for f in top_level if f in setters}
    launchers = _launchers(facts)
    summary.process_launchers = {f.name for f in top_level if f in launchers}
    data = facts.data
    for function in top_level:
        factory = _factory_loader(facts, function, display_name)
        if factory is not None:
            summary.loader_factories[function.name] = factory
    for function in top_level:
        inner = facts.ranks.collective_inside(function)
        if inner is not None:
            summary.collectives[function.name] = inner
    for setting in data.set_epoch_calls:
        owner = setting.receiver
        setter = facts.function_of(setting.context.scope)
        if setter is not None and setter in top_level and isinstance(owner, cst.Name) and owner.value in setter.params:
            summary.epoch_setters.setdefault(setter.name, (owner.value, setter.params.index(owner.value)))
    for name in data.iterable_dataset_classes:
        if name in facts.classes:
            summary.iterable_classes[name] = data.class_splits_stream(name)
    for base in sorted(DISTRIBUTED_ENTRY_POINTS):
        for name in sorted(facts.subclasses_of({base}) & set(facts.classes)):
            summary.distributed_classes.setdefault(name, base)
    for name in data.loader_model.loader_classes:
        if name in facts.classes:
            summary.loader_classes[name] = data.loader_model.class_picks_its_samples(name)
    for function in top_level:
        _summarise_data_helper(facts, function, display_name, summary)
    return summary


def _summarise_data_helper(facts: "ModuleFacts", function, display_name: str, summary: ModuleSummary) -> None:
    """What a top-level function does for a caller's loader: re-iterates a parameter pass after
    pass, returns DataLoader keyword arguments, or returns a shuffling DistributedSampler."""
    data = facts.data
    repeater = data.epochs.pass_repeater(function)
    if repeater is not None:
        parameter, loop = repeater
        sets_epoch = data.sampler_model.sets_a_new_epoch_in(loop)
        where = f"{display_name}:{_line_of(facts, loop.node)}"
        summary.pass_repeaters[function.name] = PassRepeater(where, parameter, function.params.index(parameter), sets_epoch)
    if function.name in summary.loader_factories:
        return
    kwargs = data.sampler_model.returned_loader_kwargs(function)
    if kwargs is not None:
        keys, sampler = kwargs
        # A position costs a pass over the module: resolved only where a message may name it.
        where = f"{display_name}:{_line_of(facts, sampler.site.node)}" if sampler is not None else display_name
        summary.loader_kwargs[function.name] = LoaderKwargs(where, keys, sampler is not None)
        return
    sampler = data.sampler_model.returned_sampler(function)
    if sampler is not None:
        summary.sampler_factories[function.name] = f"{display_name}:{_line_of(facts, sampler.site.node)}"


def _launchers(facts: "ModuleFacts") -> set:
    """Functions that start worker processes running a function of this module (`mp.spawn(
    _worker, ...)`, not a function the caller passed in), and whose own process never joins a
    process group: whoever calls them stays one launcher process."""
    import libcst as cst

    def spawns_own_worker(site: "CallSite") -> bool:
        if facts.qualified_names(site.node.func).isdisjoint(SPAWNERS) or not site.node.args:
            return False
        worker = site.node.args[0].value
        return isinstance(worker, cst.Name) and worker.value in facts.functions_by_name

    joiners = _reaching_in_process(facts, lambda s: not facts.qualified_names(s.node.func).isdisjoint(
        PROCESS_GROUP_STARTERS - SPAWNERS))
    return {f for f in facts.functions_reaching(spawns_own_worker) if f not in joiners}


def _reaching_in_process(facts: "ModuleFacts", predicate) -> set:
    """`facts.functions_reaching`, without following `mp.spawn(fn)` edges: the functions whose
    own process makes a call satisfying `predicate`."""
    found = {f for f in facts.functions if any(predicate(s) for s in facts.calls_by_function.get(id(f), []))}
    queue = list(found)
    while queue:
        for site, bound in facts.call_sites_of(queue.pop()):
            caller = facts.function_of(site.context.scope)
            if bound is not None and caller is not None and caller not in found:
                found.add(caller)
                queue.append(caller)
    return found


def _factory_loader(facts: "ModuleFacts", function, display_name: str) -> Optional[FactoryLoader]:
    """The DataLoader this function returns (alone or in a tuple), described for callers."""
    data = facts.data
    for value, _ in function.returns:
        for loader in data.loaders:
            if loader.site.context.scope is not function.scope:
                continue
            if not data.flow.feeds(value, function.scope, loader.site.node):
                continue
            return FactoryLoader(
                where=f"{display_name}:{_line_of(facts, loader.site.node)}",
                sampler=_sampler_verdict(facts, loader),
                shuffling_sampler=any(s.shuffles and loader in s.loaders for s in data.samplers),
                shuffle=loader.shuffle,
                judged_there=bool(facts.distributed) and data.is_training_loader(loader),
                **_dataset_parameter(facts, function, loader),
            )
    return None


def _sampler_verdict(facts: "ModuleFacts", loader) -> "SamplerKind":
    """The module's own exemptions, applied where the loader is built: a framework, an iterable
    or hand-sharded dataset, all count as a sampler for the caller."""
    from ddplint.analysis.loaders import SamplerKind

    data = facts.data
    if loader.sampler is SamplerKind.PRESENT:
        return SamplerKind.PRESENT
    if data.handed_to_framework(loader) or data.is_iterable_dataset(loader) or data.is_sharded_by_hand(loader):
        return SamplerKind.PRESENT
    return loader.sampler


def _dataset_parameter(facts: "ModuleFacts", function, loader) -> dict:
    """Which parameter of the factory becomes the loader's dataset (directly), so the caller can
    judge the dataset it passes (sharded by hand, iterable ...)."""
    import libcst as cst

    dataset = loader.dataset
    if isinstance(dataset, cst.Name) and dataset.value in function.params:
        bindings = function.scope.bindings.get(dataset.value, [])
        if all(b.kind == "param" for b in bindings):
            return {"dataset_parameter": function.params.index(dataset.value), "dataset_keyword": dataset.value}
    return {"dataset_parameter": None, "dataset_keyword": None}


# What a module that defines no function or class of the name asked for says about it.
_NOTHING_RECORDED = ModuleSummary()


def _line_of(facts: "ModuleFacts", node: cst.CSTNode) -> int:
    """Positions are resolved only for modules that do export a loader factory."""
    from ddplint.positions import positions_of

    return positions_of(facts.module, [node])[node].start.line


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
        self.files = {self._real_path(str(p)) for p in paths if str(p).endswith(".py")}
        self._summaries: dict[str, Optional[ModuleSummary]] = {}
        self._outlines: dict[str, tuple[bool, Optional[frozenset[str]]]] = {}
        # (size, mtime_ns) of each module when its outline or summary was worked out
        self._stamps: dict[str, Optional[tuple[int, int]]] = {}
        self._starter_names: Optional[frozenset[str]] = None
        # What other processes of the run have worked out (a worker pool's; none by default).
        self._shared: SharedSummaries = _NOT_SHARED
        # Summaries and outlines kept across runs (the results cache folder's; none by default).
        self._store: SummaryStore = _NO_STORE
        self._last_targets: tuple[str, bytes, list[tuple[str, str]]] = ("", b"", [])
        self._roots = _common_root(self.files)
        self._resolved: dict[tuple[str, str], Optional[tuple[str, str]]] = {}
        # path -> (the names its `from M import *` hands on to imports, the files they come from)
        self._star_exports: dict[str, tuple[dict[str, frozenset[str]], frozenset[str]]] = {}
        # (importer, name) -> the module that re-exports it, where `_resolved` names another
        self._reexported_by: dict[tuple[str, str], tuple[str, str]] = {}
        self._definitions: dict[tuple[str, str], tuple[str, str]] = {}  # (module, name) -> where defined
        self._names_of_module: dict[str, tuple[Optional[frozenset[str]], dict[str, list[tuple[str, bool]]]]] = {}
        self._importer_places: dict[str, tuple[str, str, list[str], list[str]]] = {}
        # sys.path additions of `_init_paths`-style modules (search_path.py), worked out lazily
        self._path_additions: dict[str, list[str]] = {}
        self._adders_by_folder: dict[str, dict[str, list[str]]] = {}
        self._files_by_folder: Optional[dict[str, list[str]]] = None
        self._rank_callers: dict[tuple[str, str], list[str]] = {}
        self._cpu_saves: dict[tuple[str, frozenset[str]], bool] = {}
        self._rank_calls: dict[str, dict[tuple[str, str], str]] = {}
        self._calls_named: dict[str, frozenset[str]] = {}
        self._module_facts: dict[str, tuple[Optional[tuple[int, int]], Optional["ModuleFacts"]]] = {}
        # Names a project module can be imported by: file stems, and package directory names.
        self._files_by_name: dict[bytes, list[str]] = {}
        for f in sorted(self.files):  # os.path, not pathlib: a run over unchanged files pays for this
            self._files_by_name.setdefault(_module_name(f).encode(), []).append(f)
        self._names = set(self._files_by_name)

    def __len__(self) -> int:
        return len(self.files)

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
        return file, attribute

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
            within = [str(p) for p in here.parents if self._roots is not None and _within(p, self._roots)]
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

    def may_start_process_group(self, names: AbstractSet[str]) -> bool:
        """Whether a file using `names` could call a project function that starts the process
        group (ProjectView.starts_process_group), told without a parse: the call names the
        function, and the function is one that a module spelling a starter defines. Those
        modules are found once per index by a look at every file's bytes."""
        if self._starter_names is None:
            self._starter_names = frozenset(self._possible_starter_names())
        return not self._starter_names.isdisjoint(names)

    def _possible_starter_names(self) -> Iterator[str]:
        for path in self.files:
            try:
                data = read_file(path)
            except OSError:
                continue
            code = _compiled(data, path) if any(word in data for word in _STARTER_WORDS) else None
            if code is not None:  # one that does not compile has no summary either: it is never parsed
                yield from _functions_reaching_a_starter(code)

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
            self._cpu_saves.clear()
            self._rank_calls.clear()
            self._calls_named.clear()
        for path in changed:
            del self._stamps[path]
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
        return _NOTHING_RECORDED if self._outline(path)[0] else None

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
            summary = _summary_of(data, path)
            self._store.save(kind, data, summary_to_json(summary))
            return self._shared.saved("summary", path, summary)

    def _stored_outline(self, path: str) -> tuple[bool, Optional[frozenset[str]]]:
        """The module's outline (`_outline_from`), read from the store for a module whose content it has seen (the cheap
        screens first: only a module that passes them costs a look-up, and a compile if new)."""
        data = _screened_source(path)
        if data is None:
            return False, None
        stored = outline_from_json(self._store.load("outline", data))
        if stored is not None:
            return stored
        outline = _outline_from(data, path, self._parses_safely)
        self._store.save("outline", data, outline_to_json(outline))
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
        path = self._real_path(path)
        found: list[str] = []
        for name in sorted(functions):
            key = (path, name)
            if key not in self._rank_callers:
                self._rank_callers[key] = self._find_rank_callers(path, name)
            found.extend(self._rank_callers[key])
        return found

    def caller_words(self, path: str) -> list[str]:
        """The module names a file's result depends on through other modules that import it
        or write its files (`rank_callers`, `saved_only_from_cpu`): every module of the project
        once the file asked (any module may start calling it or writing the file), none
        otherwise. A results cache keys the file on them with its own imports."""
        path = self._real_path(path)
        if not any(key[0] == path for key in (*self._rank_callers, *self._cpu_saves)):
            return []
        return sorted(name.decode("ascii", "replace") for name in self._names)

    def _find_rank_callers(self, path: str, name: str) -> list[str]:
        targets = {(path, name)} | {(init, name) for init in self._reexporters(path, name)}
        places = []
        for caller in sorted(self.files - {path}):
            if name not in self._called_names(caller):
                continue
            data = _caller_source(caller)
            if data is None or not targets & set(self.imported_targets(caller, data)):
                continue
            for target, place in self._called_in_ranks(caller, data).items():
                if target in targets:
                    places.append(place)
        return places

    def _called_names(self, path: str) -> frozenset[str]:
        """The names a module calls by (`restore(` / `ckpt.restore(`), read off its bytes once
        per index: most modules never call a given helper and are not read again for it."""
        known = self._calls_named.get(path)
        if known is None:
            self._stamps.setdefault(path, _stamp(path))  # forget_changed then sees it change
            data = _caller_source(path)
            found = _CALLED_NAME.findall(data) if data is not None else []
            known = self._calls_named[path] = frozenset(word.decode("ascii", "replace") for word in found)
        return known

    def _called_in_ranks(self, caller: str, data: bytes) -> dict[tuple[str, str], str]:
        """(project file, function) -> "train.py:194" for each project function a distributed
        module calls from code every rank runs; worked out once per module."""
        known = self._rank_calls.get(caller)
        if known is None:
            facts = self._caller_facts(caller, data)
            try:
                known = _rank_calls_of(self, caller, facts) if facts is not None and facts.distributed else {}
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

    def _caller_facts(self, caller: str, data: bytes) -> Optional["ModuleFacts"]:
        """The caller's facts, with its own view of the project (its process group may be
        started by a helper of a third module)."""
        import libcst as cst

        from ddplint.analysis.facts import build_facts
        from ddplint.analysis.syntax import parse_module

        if not self._parses_safely(data, caller):
            return None
        try:
            module = parse_module(data)
            return build_facts(module, data.decode(module.encoding, errors="replace"), self.view_for(caller))
        except (RecursionError, MemoryError, cst.ParserSyntaxError, ValueError):
            return None

    def module_facts(self, path: str) -> Optional["ModuleFacts"]:
        """The facts of one project module (without a project view of its own), parsed once while
        the file is unchanged; None when it cannot be read, is too large, or does not parse
        safely. For questions a summary does not record (which buffers a model module declares)."""
        stamp = _stamp(path)
        known = self._module_facts.get(path)
        if known is not None and known[0] == stamp:
            return known[1]
        try:
            data: Optional[bytes] = read_file(path)
        except OSError:
            data = None
        facts = None
        if data is not None and len(data) <= MAX_ANALYSED_BYTES and self._parses_safely(data, path):
            facts = _facts_of(data)
        self._module_facts[path] = (stamp, facts)
        return facts

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
            facts = _facts_of(data) if self._parses_safely(data, other) else None
            try:
                saves = [saves_cpu_tensors(facts, save) for save in saves_of(facts, set(names))] if facts else None
            except Exception:  # RecursionError, or a bug: that module's saves are unknown
                saves = None
            if saves is None or not all(saves):
                return False  # a module that may write the file from the GPU, or cannot be read
            found = found or bool(saves)
        return found


def _rank_calls_of(index: ProjectIndex, caller: str, facts: "ModuleFacts") -> dict[tuple[str, str], str]:
    """ProjectIndex._called_in_ranks for a distributed module's facts."""
    first: dict[tuple[str, str], "cst.CSTNode"] = {}
    for site in facts.calls:
        targets = {t for t in (index.resolve(caller, q) for q in facts.qualified_names(site.node.func)) if t}
        if not targets or set(first).issuperset(targets):
            continue
        if facts.where.call_in_a_rank(site) and not facts.ranks.call_runs_on_one_rank_only(site):
            for target in targets:
                first.setdefault(target, site.node)
    if not first:
        return {}
    from ddplint.positions import positions_of

    lines = positions_of(facts.module, list(first.values()))
    return {target: f"{os.path.basename(caller)}:{lines[node].start.line}" for target, node in first.items()}


_CALLED_NAME = re.compile(rb"(?<![\w])([A-Za-z_]\w*)\s*\(")


def _caller_source(path: str) -> Optional[bytes]:
    """A module's source when it can be analysed (the engine's size limit), else None."""
    try:
        data = read_file(path)
    except OSError:
        return None
    return data if len(data) <= MAX_ANALYSED_BYTES else None


def _stamp(path: str) -> Optional[tuple[int, int]]:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns


def _summary_of(data: bytes, path: str) -> Optional[ModuleSummary]:
    facts = _facts_of(data)
    if facts is None:
        return None
    try:
        return summarise(facts, os.path.basename(path))
    except Exception:  # RecursionError, or a bug in a summary: that module offers nothing, the
        return None  # run goes on (one module must not cost every file its findings)


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


# -- summaries as JSON ---------------------------------------------------------------------------
# Driven by the record types' annotations, so a field added to ModuleSummary (or to a record it
# holds) is kept with no change here; a field of a type this codec does not know fails the
# round-trip test (tests/test_summary_store.py) instead of being dropped.
class _Undecodable(Exception):
    """Stored JSON that is not what `_to_json` writes for the type."""


def summary_to_json(summary: Optional[ModuleSummary]) -> Any:
    """{"summary": null} for a module without one, else its fields as JSON."""
    return {"summary": None if summary is None else _to_json(summary, ModuleSummary)}


def summary_from_json(value: Any) -> Optional[tuple[Optional[ModuleSummary]]]:
    """(summary,) for what `summary_to_json` wrote; None for anything else (a miss)."""
    if type(value) is not dict or set(value) != {"summary"}:
        return None
    try:
        return (None if value["summary"] is None else _from_json(value["summary"], ModuleSummary),)
    except (_Undecodable, ValueError, TypeError):
        return None


def outline_to_json(outline: tuple[bool, Optional[frozenset[str]]]) -> Any:
    summarisable, recordable = outline
    return [summarisable, None if recordable is None else sorted(recordable)]


def outline_from_json(value: Any) -> Optional[tuple[bool, Optional[frozenset[str]]]]:
    try:
        return _from_json(value, tuple[bool, Optional[frozenset[str]]])
    except (_Undecodable, ValueError, TypeError):
        return None


def _hints(record: type) -> dict[str, Any]:
    """A record's field types, with the names its annotations use under TYPE_CHECKING."""
    from ddplint.analysis.loaders import SamplerKind
    from ddplint.analysis.records import CollectiveReach

    names = {"SamplerKind": SamplerKind, "CollectiveReach": CollectiveReach}
    return typing.get_type_hints(record, globalns=globals(), localns=names)


# `Optional[X]`, and `X | None` where the interpreter has it
_UNIONS = (typing.Union, getattr(types, "UnionType", typing.Union))


def _to_json(value: Any, hint: Any) -> Any:
    origin, arguments = typing.get_origin(hint), typing.get_args(hint)
    if origin in _UNIONS:  # Optional[X]
        if value is None:
            return None
        return _to_json(value, next(a for a in arguments if a is not type(None)))
    if hint in (bool, int, str):
        return value
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return value.value
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        hints = _hints(hint)
        return {f.name: _to_json(getattr(value, f.name), hints[f.name]) for f in dataclasses.fields(hint)}
    if origin in (set, frozenset):
        return sorted(_to_json(item, arguments[0]) for item in value)
    if origin is dict and arguments[0] is str:
        return {key: _to_json(item, arguments[1]) for key, item in value.items()}
    if origin is tuple and Ellipsis not in arguments:
        return [_to_json(item, kind) for item, kind in zip(value, arguments)]
    raise TypeError(f"no JSON form for {hint!r}")


def _from_json(value: Any, hint: Any) -> Any:
    """The value `_to_json(x, hint)` gave, checked down to every value's type."""
    origin, arguments = typing.get_origin(hint), typing.get_args(hint)
    if origin in _UNIONS:
        return None if value is None else _from_json(value, next(a for a in arguments if a is not type(None)))
    if hint in (bool, int, str):
        if type(value) is not hint:
            raise _Undecodable(hint)
        return value
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return hint(value)  # ValueError for a value it does not have
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        hints = _hints(hint)
        fields = dataclasses.fields(hint)
        if type(value) is not dict or set(value) != {f.name for f in fields}:
            raise _Undecodable(hint)
        return hint(**{f.name: _from_json(value[f.name], hints[f.name]) for f in fields})
    if origin in (set, frozenset):
        if type(value) is not list:
            raise _Undecodable(hint)
        return origin(_from_json(item, arguments[0]) for item in value)
    if origin is dict and arguments[0] is str:
        if type(value) is not dict:
            raise _Undecodable(hint)
        return {key: _from_json(item, arguments[1]) for key, item in value.items()}
    if origin is tuple and Ellipsis not in arguments:
        if type(value) is not list or len(value) != len(arguments):
            raise _Undecodable(hint)
        return tuple(_from_json(item, kind) for item, kind in zip(value, arguments))
    raise _Undecodable(hint)


def _screened_source(path: str) -> Optional[bytes]:
    """A project module's source, or None when it cannot offer anything: the same size screen as
    the engine's, with the words a summary reads as triggers (most modules of a large project are
    never parsed for their summary)."""
    try:
        data = read_file(path)
    except OSError:
        return None
    if len(data) > MAX_ANALYSED_BYTES or not (_SUMMARY_WORDS.search(data) or _GENERATOR_WORD.search(data)):
        return None
    return data


def _outline_from(
    data: bytes, path: str, parses_safely: Callable[[bytes, str], bool]
) -> tuple[bool, Optional[frozenset[str]]]:
    """The outline of a module whose source passed `_screened_source`."""
    if not parses_safely(data, path):  # also keeps libcst away from pathological nesting
        return False, None
    if not _SUMMARY_EVIDENCE.search(data):
        return True, frozenset()  # it names none of the things a summary records
    code = _compiled(data, path)
    if code is None:
        return True, None
    return True, _recordable_names(code, generators_only=not _SUMMARY_WORDS.search(data))


def _compiled(data: bytes, path: str) -> Optional[CodeType]:
    """A project module's code, or None where CPython refuses it (its own warnings not shown:
    they are not ddplint's to print)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return compile(data, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _functions_reaching_a_starter(module: CodeType) -> set[str]:
    """The module-level functions of a compiled module whose code names a process-group starter,
    or names a function or method of the module that does, and so on: a superset of what
    `summarise` records, where calls are followed by their targets."""
    uses: dict[str, set[str]] = {}  # function or method name -> every name its code (nested code too) uses
    stack = [(module, "")]
    while stack:
        code, owner = stack.pop()
        for const in code.co_consts:
            if isinstance(const, CodeType):
                name = owner if owner and const.co_flags & inspect.CO_OPTIMIZED and const.co_name.startswith("<") else const.co_name
                uses.setdefault(name, set()).update(const.co_names, const.co_varnames, const.co_freevars, const.co_cellvars)
                stack.append((const, name))
    reaching = set(_STARTER_NAMES)
    while True:
        more = {name for name, used in uses.items() if name not in reaching and not used.isdisjoint(reaching)}
        if not more:
            break
        reaching |= more
    top_level = {c.co_name for c in module.co_consts if isinstance(c, CodeType) and c.co_flags & inspect.CO_OPTIMIZED}
    return top_level & reaching


def _recordable_names(module: CodeType, generators_only: bool = False) -> frozenset[str]:
    """The names a summary can record: functions of the module's own scope (also those under a
    module-level `if` / `try`) and classes at any depth, read off the compiled code objects (a
    class body is the code object compiled without CO_OPTIMIZED). `generators_only`: the
    module's own generator functions alone (a module that holds nothing else a summary reads)."""
    if generators_only:
        return frozenset(
            const.co_name
            for const in module.co_consts
            if isinstance(const, CodeType) and const.co_flags & inspect.CO_GENERATOR
        )
    names: set[str] = set()
    stack = [(module, True)]
    while stack:
        code, module_level = stack.pop()
        for const in code.co_consts:
            if isinstance(const, CodeType):
                if module_level or not const.co_flags & inspect.CO_OPTIMIZED:
                    names.add(const.co_name)
                stack.append((const, False))
    return frozenset(names)


def _facts_of(data: bytes) -> Optional["ModuleFacts"]:
    import libcst as cst

    from ddplint.analysis.facts import build_facts
    from ddplint.analysis.syntax import parse_module

    try:
        module = parse_module(data)
        return build_facts(module, data.decode(module.encoding, errors="replace"))
    except (RecursionError, MemoryError, cst.ParserSyntaxError, ValueError):
        return None


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


def _common_root(files: set[str]) -> Optional[Path]:
    if not files:
        return None
    return Path(os.path.commonpath([str(Path(f).parent) for f in files]))


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
        target = self._target(facts, site.node.func)
        return target[0].loader_factories.get(target[1]) if target else None

    def starts_process_group(self, facts: "ModuleFacts", site: "CallSite") -> bool:
        target = self._target(facts, site.node.func)
        return target is not None and target[1] in target[0].process_group_starters

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
        return target is not None and target[1] in target[0].device_setters

    def collective(self, facts: "ModuleFacts", site: "CallSite") -> Optional[CollectiveReach]:
        """The collective a project function makes when called (`reduce_mean` -> all_reduce)."""
        for qualified in facts.qualified_names(site.node.func):
            resolved = self.index.resolve(self.path, qualified)
            if resolved is None:
                continue
            path, name = resolved
            summary = self.index.summary_for(path, name)
            if summary is not None and name in summary.collectives:
                return summary.collectives[name].through(site.name or name, Path(path).stem)
        return None

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

    def saved_only_from_cpu(self, names: AbstractSet[str]) -> bool:
        """Other modules write files of these names, from CPU tensors only."""
        return self.index.saved_only_from_cpu(self.path, names)

    def iterable_class(self, facts: "ModuleFacts", func: cst.BaseExpression) -> Optional[bool]:
        """None if `func` is not a project IterableDataset class, else whether it splits its stream."""
        target = self._target(facts, func)
        return target[0].iterable_classes.get(target[1]) if target else None
