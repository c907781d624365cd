"""What one module offers the modules that import it (`ModuleSummary`), worked out from its own
source alone, and the cheap outline read before any parse.

A training script often gets its loader, sampler, dataset class or process-group set-up from a
sibling module (`from .data import build_loader`, `from utils import init_distributed`). Each
module is summarised once: which of its top-level functions return a DataLoader and with what
sampler (or a shuffling DistributedSampler, or DataLoader keyword arguments), which re-iterate a
parameter pass after pass (an endless generator), which start the process group or set the CUDA
device, which DataLoader subclasses pick their own samples, which IterableDataset classes split
their stream, which functions make a collective every rank must reach.

Most modules of a large project offer nothing: `screened_source` (words) and `outline_from`
(the compiled code's names, narrowed with CPython's `ast` to the functions and classes that may
offer something: `offerable_names`; no libcst) decide which ones are parsed for a summary at all,
and for which names a file asks.
Summaries and outlines are plain records with a strict JSON form (`summary_to_json`), so the
results cache can keep them across runs. Which modules to summarise, and for whom, is the
project index's business (analysis/project.py); this module never reads another file.
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import inspect
import os
import re
import types
import typing
import warnings
from dataclasses import dataclass, field
from types import CodeType
from typing import TYPE_CHECKING, Any, Callable, Optional

from ddplint.analysis.torch_api import (
    ACCELERATOR_COLLECTIVES,
    BARRIER_COLLECTIVES,
    BROADCAST_COLLECTIVES,
    CHECKPOINT_COLLECTIVES,
    COLLECTIVES,
    CURRENT_DEVICE_CALLS,
    DATALOADER,
    DISTRIBUTED_ENTRY_POINTS,
    DISTRIBUTED_SAMPLER,
    FRAMEWORK_COLLECTIVES,
    ITERABLE_DATASETS,
    LIGHTNING_MODULE_COLLECTIVES,
    LIGHTNING_SYNCED_LOGGING,
    PROCESS_GROUP_STARTERS,
    SET_DEVICE,
    SPAWNERS,
    SYNCHRONISING_METHODS,
    WHOLE_DATASET_SAMPLERS,
    WRAPPER_CLASS_NAMES,
)
from ddplint.source import MAX_ANALYSED_BYTES, read_file

# libcst is imported by the functions that summarise a module, not here: a run whose files are
# all cached still builds the index (the cache asks it which files a file imports).
if TYPE_CHECKING:
    import libcst as cst

    from ddplint.analysis.facts import CallSite, ModuleFacts
    from ddplint.analysis.loaders import SamplerKind
    from ddplint.analysis.model import ModuleModel
    from ddplint.analysis.records import CollectiveReach

_SAMPLER_CLASS_NAMES = frozenset(name.rsplit(".", 1)[-1] for name in DISTRIBUTED_SAMPLER)
# Samplers over the whole dataset that a helper may return in place of a DistributedSampler.
_WHOLE_DATASET_SAMPLER_NAMES = frozenset(name.rsplit(".", 1)[-1] for name in WHOLE_DATASET_SAMPLERS)


# What a module must call (or subclass) to offer anything in its summary: loaders, samplers and
# streaming datasets, process-group and device set-up, set_epoch, collectives, generators,
# `backward()` (a function or method training on a loader it is given: LoaderTrainer), and the
# current-device calls `synchronize()` / `current_device()` (work on the current CUDA device). Modules
# without such a call are never parsed for their summary: in a large library almost every module
# is imported by some file, and only a few build loaders or start process groups.

_SUMMARY_CALLS = frozenset(
    {"DataLoader", "init_process_group", "start_processes", "spawn", "init_distributed", "set_device", "device",
     "set_epoch", "backward", "synchronize", "current_device"} | COLLECTIVES | BROADCAST_COLLECTIVES | BARRIER_COLLECTIVES | ACCELERATOR_COLLECTIVES
    | _SAMPLER_CLASS_NAMES | _WHOLE_DATASET_SAMPLER_NAMES | WRAPPER_CLASS_NAMES
)
_SUMMARY_BASES = frozenset({"IterableDataset", "IterDataPipe", "WebDataset", "IterableWrapper", "DataLoader"})


def _summary_words() -> re.Pattern:
    calls = sorted(_SUMMARY_CALLS, key=lambda word: (-len(word), word))
    return re.compile(
        rb"(?<![\w])(?:" + b"|".join(re.escape(word).encode() for word in calls) + rb")\s*\("
        rb"|\(\s*[\w.]*(?:" + b"|".join(re.escape(name).encode() for name in sorted(_SUMMARY_BASES)) + b"|"
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
    re-iterating a loader), `backward` (a function training on a loader), samplers over the
    whole dataset (a helper returning one), process-group starters and spawners
    (`torch.distributed`, `torch.multiprocessing`, `deepspeed`), device setters (`torch.cuda`),
    collectives (`torch.distributed`, an Accelerator, Lightning's trainer). tests/test_screen.py
    checks these words against the torch_api tables."""
    classes = {name.rsplit(".", 1)[-1] for name in DATALOADER | ITERABLE_DATASETS}
    words = sorted(
        classes | _SAMPLER_CLASS_NAMES | _WHOLE_DATASET_SAMPLER_NAMES | WRAPPER_CLASS_NAMES | {"set_epoch", "distributed", "multiprocessing", "deepspeed", "cuda", "lightning", "yield", "backward"}
    )
    return re.compile(b"|".join(re.escape(word).encode() for word in words) + rb"|(?i:accelerat)")


_SUMMARY_EVIDENCE = _summary_evidence()
# A module's function starts the process group for its callers only by calling a starter, itself
# or through functions of its module (`summarise`: the functions reaching PROCESS_GROUP_STARTERS),
# so the module's code names the starter.
_STARTER_NAMES = frozenset(name.rsplit(".", 1)[-1] for name in PROCESS_GROUP_STARTERS)
STARTER_WORDS = tuple(sorted(name.encode() for name in _STARTER_NAMES))
# A function makes a collective for its callers by calling one, itself or through functions of its
# module (`summarise`: `RankModel.collective_inside`), so the module's code names it.
_COLLECTIVE_NAMES = COLLECTIVES | BROADCAST_COLLECTIVES | BARRIER_COLLECTIVES | ACCELERATOR_COLLECTIVES
_COLLECTIVE_PACKAGE_IMPORT = re.compile(
    rb"(?m)^[ \t]*(?:import[ \t]+(?:torch\.distributed|accelerate|deepspeed|horovod)\b"
    rb"|from[ \t]+(?:torch\.distributed|accelerate|deepspeed|horovod|ignite\.distributed)[\w.]*[ \t]+import\b"
    rb"|from[ \t]+torch[ \t]+import[^\n]*\bdistributed\b)"
)
_COLLECTIVE_WORD = re.compile(rb"\b(?:" + b"|".join(re.escape(name.encode()) for name in sorted(_COLLECTIVE_NAMES)) + rb")\b")


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
    # A factory that returns another loader when a parameter says the run is not distributed
    # (`if not distributed: return DataLoader(ds, shuffle=True)`): that parameter, its position
    # and its default's truth (None: no default, or not a literal), and that loader. The fields
    # above describe the loader the ranks get when the caller's value says distributed.
    mode_parameter: Optional[str] = None
    mode_position: Optional[int] = None
    mode_default: Optional[bool] = None
    single_process_sampler: Optional["SamplerKind"] = None
    single_process_shuffle: Optional[bool] = None
    single_process_where: Optional[str] = None
    # The factory parameter that the shuffling sampler's `shuffle=` comes from
    # (`DistributedSampler(ds, shuffle=shuffle)`, also through a helper of the module), its
    # position and its default's truth: a caller passing False gets a sampler that does not shuffle.
    shuffle_parameter: Optional[str] = None
    shuffle_position: Optional[int] = None
    shuffle_default: Optional[bool] = None
    # A parameter that makes the function return before it builds the loader (`if
    # return_datasets: return train_set, val_set`), its position, and the truth that does it:
    # a caller passing that value gets no loader from the call.
    early_return_parameter: Optional[str] = None
    early_return_position: Optional[int] = None
    early_return_when: Optional[bool] = None


@dataclass(frozen=True)
class PassRepeater:
    """A generator that starts a new pass over what one parameter gives it on every turn of a
    loop (`while True: yield from loader`): called with a loader, it runs the epochs."""

    where: str  # "utils.py:3", the loop, for messages
    parameter: str
    position: int
    sets_epoch: bool  # it sets some epoch (`sampler.set_epoch(n)`) in that loop, a new one each turn


@dataclass(frozen=True)
class LoaderTrainer:
    """A function (or a method, recorded as "Class.method") that trains on what one parameter
    gives it: a loop of its own over the parameter steps the model. Called with a loader, that
    loader is trained on; with a loop around that pass inside (`for epoch in range(n)`), the
    function runs the epochs itself."""

    parameter: str
    position: int  # among the arguments a caller writes (`self` not counted for a method)
    epochs_at: Optional[str]  # "trainer.py:12", the loop around the pass, when it repeats the pass
    sets_epoch: bool  # that loop sets some sampler's epoch, a new one each turn


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
    # function -> {parameter: position} of the parameters it runs forward on as a module
    # (`model(x)`, `model.forward(x)`, itself or through the module's own functions; not
    # `model.module(x)`): handed a DDP model, it makes the wrapper's collectives (DDP007)
    forwarded_parameters: dict[str, dict[str, int]] = field(default_factory=dict)
    # DataLoader subclass -> whether it picks its own samples (hands super().__init__ a sampler,
    # or replaces __iter__)
    loader_classes: dict[str, bool] = field(default_factory=dict)
    pass_repeaters: dict[str, PassRepeater] = field(default_factory=dict)
    loader_trainers: dict[str, LoaderTrainer] = field(default_factory=dict)
    # "Class.method" -> the method trains on what `Class(...)` stored from one of its constructor
    # parameters (`self.loader = loader`): parameter and position are the constructor's.
    stored_loader_trainers: dict[str, LoaderTrainer] = field(default_factory=dict)
    # function -> (the places of the tuples it returns that are only ever None or a sampler over
    # the whole dataset (`return train_ds, valid_ds, WeightedRandomSampler(...)`), those of them
    # where such a sampler is built)
    unsharded_samplers: dict[str, tuple[frozenset[int], frozenset[int]]] = field(default_factory=dict)
    loader_kwargs: dict[str, LoaderKwargs] = field(default_factory=dict)
    # function -> where the shuffling DistributedSampler it builds and returns is built
    sampler_factories: dict[str, str] = field(default_factory=dict)
    # class -> the torch class of DISTRIBUTED_ENTRY_POINTS it extends (a project's own
    # DistributedSampler or DistributedDataParallel subclass, `torchft.DistributedSampler`)
    distributed_classes: dict[str, str] = field(default_factory=dict)
    # top-level function or class -> where ("trainer.py:12") the code it runs (a class: its
    # `__init__`) works on the current CUDA device (a pinning DataLoader, `torch.cuda.synchronize()`,
    # a bare NCCL barrier, `.cuda()`), in a module that never makes a device current (DDP005)
    current_device_work: dict[str, str] = field(default_factory=dict)
    # top-level functions returning the current CUDA device as a value (`torch.device("cuda")`),
    # in a module that never makes a device current (DDP005: a placement on what they return)
    current_device_returners: set[str] = field(default_factory=set)
    # top-level function -> {parameter: position} of the parameters it picks the rank's GPU with
    # (`torch.cuda.set_device(local_rank % n)`), in a function that never reads LOCAL_RANK
    # itself (DDP005: a `--local_rank` option handed to it decides every rank's device)
    device_parameters: dict[str, dict[str, int]] = field(default_factory=dict)

    def _tables(self) -> tuple:
        return (
            self.process_group_starters, self.device_setters, self.loader_factories, self.iterable_classes,
            self.epoch_setters, self.collectives, self.forwarded_parameters, self.loader_classes, self.pass_repeaters, self.loader_kwargs,
            self.sampler_factories, self.distributed_classes, self.loader_trainers, self.unsharded_samplers,
            self.stored_loader_trainers, self.current_device_work, self.current_device_returners,
            self.device_parameters,
        )

    def offered_names(self) -> set[str]:
        """The names a caller must use to reach something recorded: a function, or the class
        of a method recorded as `Class.method` (called on an instance the caller builds)."""
        return {name.split(".", 1)[0] for table in self._tables() for name in table}

    def offers_anything(self) -> bool:
        return any(self._tables())


def summarise(model: "ModuleModel", display_name: str) -> ModuleSummary:
    facts = model.facts
    import libcst as cst

    summary = ModuleSummary()
    top_level = [f for f in facts.functions if f.class_name is None and f.scope.parent is facts.module_scope]
    starters = facts.functions_reaching(lambda s: not facts.qualified_names(s.node.func).isdisjoint(PROCESS_GROUP_STARTERS))
    setters = facts.functions_reaching(lambda s: not facts.qualified_names(s.node.func).isdisjoint(SET_DEVICE))
    summary.process_group_starters = {f.name for f in top_level if f in starters}
    summary.device_setters = {f.name for f in top_level if f in setters}
    launchers = _launchers(facts)
    summary.process_launchers = {f.name for f in top_level if f in launchers}
    data = model.data
    for function in top_level:
        factory = _factory_loader(model, function, display_name)
        if factory is not None:
            summary.loader_factories[function.name] = factory
    for function in _plain_methods(facts):  # `DataModule(cfg).train_loader()` in the caller
        factory = _factory_loader(model, function, display_name)
        if factory is not None:
            summary.loader_factories[f"{function.class_name}.{function.name}"] = factory
    for function in top_level:
        inner = model.ranks.collective_inside(function)
        if inner is not None:
            summary.collectives[function.name] = inner
    forwarding = _forwarded_parameters(facts)
    for function in top_level:
        if forwarding.get(id(function)):
            summary.forwarded_parameters[function.name] = {p: function.params.index(p) for p in sorted(forwarding[id(function)])}
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
        _summarise_data_helper(model, function, display_name, summary)
        places = data.loader_model.unsharded_sampler_places(function)
        if places[0]:
            summary.unsharded_samplers[function.name] = places
    for function in facts.functions:
        _summarise_loader_trainer(model, function, display_name, top_level, summary)
    _summarise_stored_loader_trainers(model, display_name, summary)
    summary.current_device_returners = model.devices.offered_current_device_values
    summary.device_parameters = model.devices.offered_device_parameters
    offered = model.devices.offered_current_device_work
    if offered:  # one pass over the module for every position (each is a pass of its own)
        from ddplint.positions import positions_of

        positions = positions_of(facts.module, [site.node for site in offered.values()])
        for name, site in offered.items():
            summary.current_device_work[name] = f"{display_name}:{positions[site.node].start.line}"
    return summary


def _summarise_stored_loader_trainers(model: "ModuleModel", display_name: str, summary: ModuleSummary) -> None:
    """Record the methods of top-level classes that train on a loader their constructor stored
    on the instance (`Epochs.stored_loader_trainers`)."""
    facts = model.facts
    data = model.data
    for name, owner in facts.classes.items():
        if owner.scope is None or owner.scope.parent is not facts.module_scope:
            continue
        init = next((f for f in facts.functions if f.name == "__init__" and f.scope.parent is owner.scope), None)
        if init is None:
            continue
        for method, (parameter, around) in data.epochs.stored_loader_trainers(owner, data.loop_trains).items():
            repeats = around is not None and not data.runs_once(around)
            epochs_at = f"{display_name}:{line_of(facts, around.node)}" if repeats and around is not None else None
            # Any set_epoch in the module counts, one pass or many: the class may set it on its
            # stored loader's sampler anywhere (`self.loader.sampler.set_epoch(self.epoch)`).
            sets_epoch = bool(data.sampler_model.set_epoch_calls) or (
                repeats and around is not None and data.sampler_model.sets_a_new_epoch_in(around)
            )
            position = init.params.index(parameter) - 1
            summary.stored_loader_trainers[f"{name}.{method}"] = LoaderTrainer(parameter, position, epochs_at, sets_epoch)


def _forwarded_parameters(facts: "ModuleFacts") -> dict[int, set[str]]:
    """id(function) -> the parameters it calls as a module (`model(x)`, `model.forward(x)`),
    itself or by handing them on to a function of the module that does. Only a parameter the
    function never rebinds counts: after `model = model.module` the call is the plain module's."""
    import libcst as cst

    def untouched_parameter(function, expr: "cst.BaseExpression") -> Optional[str]:
        if not isinstance(expr, cst.Name) or expr.value not in function.params:
            return None
        bindings = function.scope.bindings.get(expr.value, [])
        return expr.value if all(b.kind == "param" for b in bindings) else None

    forwarded: dict[int, set[str]] = {}
    for function in facts.functions:
        for site in facts.calls_by_function.get(id(function), []):
            func = site.node.func
            if isinstance(func, cst.Attribute) and func.attr.value == "forward":
                func = func.value
            name = untouched_parameter(function, func)
            if name is not None:
                forwarded.setdefault(id(function), set()).add(name)
    changed = True
    while changed:  # handed on to a function of the module that forwards it: to a fixed point
        changed = False
        for function in facts.functions:
            for site in facts.calls_by_function.get(id(function), []):
                for callee, bound in facts.functions_called_by(site):
                    wanted = forwarded.get(id(callee), set())
                    for parameter, value in callee.param_for(site.node, bound).items():
                        name = untouched_parameter(function, value) if parameter in wanted else None
                        if name is not None and name not in forwarded.setdefault(id(function), set()):
                            forwarded[id(function)].add(name)
                            changed = True
    return forwarded


def _summarise_loader_trainer(model: "ModuleModel", function, display_name: str, top_level: list, summary: ModuleSummary) -> None:
    """Record a top-level function, or a plain method of a top-level class, that trains on a
    parameter (`Epochs.loader_trainer`)."""
    facts = model.facts
    owner = facts.classes.get(function.class_name) if function.class_name is not None else None
    method = owner is not None and owner.scope is not None and owner.scope is function.scope.parent
    if method:
        assert owner is not None and owner.scope is not None
        if owner.scope.parent is not facts.module_scope or function.node.decorators or not function.params:
            return  # static / class methods and properties bind no instance the way a call reads
    elif function not in top_level:
        return
    data = model.data
    found = data.epochs.loader_trainer(function, data.loop_trains)
    if found is None:
        return
    parameter, around = found
    repeats = around is not None and not data.runs_once(around)
    epochs_at = f"{display_name}:{line_of(facts, around.node)}" if repeats and around is not None else None
    # A set_epoch call anywhere in the module counts too: a helper the loop calls may make it
    # (`self._start_epoch(loader, epoch)`), and the rule prefers silence to guessing.
    sets_epoch = repeats and around is not None and (
        data.sampler_model.sets_a_new_epoch_in(around) or bool(data.sampler_model.set_epoch_calls)
    )
    position = function.params.index(parameter) - (1 if method else 0)
    key = f"{function.class_name}.{function.name}" if method else function.name
    summary.loader_trainers[key] = LoaderTrainer(parameter, position, epochs_at, sets_epoch)


def _summarise_data_helper(model: "ModuleModel", function, display_name: str, summary: ModuleSummary) -> None:
    """What a top-level function does for a caller's loader: re-iterates a parameter pass after
    pass, returns DataLoader keyword arguments, or returns a shuffling DistributedSampler."""
    facts = model.facts
    data = model.data
    repeater = data.epochs.pass_repeater(function)
    if repeater is not None:
        parameter, loop = repeater
        sets_epoch = data.sampler_model.sets_a_new_epoch_in(loop)
        where = f"{display_name}:{line_of(facts, loop.node)}"
        summary.pass_repeaters[function.name] = PassRepeater(where, parameter, function.params.index(parameter), sets_epoch)
    if function.name in summary.loader_factories:
        return
    kwargs = data.sampler_model.returned_loader_kwargs(function)
    if kwargs is not None:
        keys, sampler = kwargs
        # A position costs a pass over the module: resolved only where a message may name it.
        where = f"{display_name}:{line_of(facts, sampler.site.node)}" if sampler is not None else display_name
        summary.loader_kwargs[function.name] = LoaderKwargs(where, keys, sampler is not None)
        return
    sampler = data.sampler_model.returned_sampler(function)
    if sampler is not None:
        summary.sampler_factories[function.name] = f"{display_name}:{line_of(facts, sampler.site.node)}"


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


def _plain_methods(facts: "ModuleFacts") -> list:
    """Methods defined directly in a top-level class: what a caller's `C(...).method()` runs."""
    return [
        function
        for function in facts.functions
        if function.class_name in facts.classes
        and function.scope.parent is not None
        and function.scope.parent.parent is facts.module_scope
    ]


def _factory_loader(model: "ModuleModel", function, display_name: str) -> Optional[FactoryLoader]:
    """The DataLoader this function returns (alone or in a tuple), described for callers: the
    one the ranks get, and, when a parameter on the run's mode picks another one for the single
    process (`if not distributed: return DataLoader(ds, shuffle=True)`), that one too."""
    from ddplint.analysis.where import Where

    facts = model.facts
    data = model.data
    returned = [
        loader
        for loader in data.loaders
        if _built_for(facts, function, loader)
        and any(data.flow.feeds(value, function.scope, loader.site.node) for value, _ in function.returns)
    ]
    if not returned:
        return None
    single = [loader for loader in returned if model.where.of(loader.site.context) is Where.SINGLE_PROCESS]
    ranks = [loader for loader in returned if loader not in single]
    loader = (ranks or returned)[0]
    described = FactoryLoader(
        where=f"{display_name}:{line_of(facts, loader.site.node)}",
        sampler=_sampler_verdict(model, loader),
        shuffle=loader.shuffle,
        # not where its dataset comes from a caller there (a constructor's parameter): the
        # module is silent about it, and the caller that builds the object knows more
        judged_there=bool(model.distributed) and data.is_training_loader(loader) and not data.dataset_comes_from_caller(loader),
        **_dataset_parameter(facts, function, loader),
        **_shuffle_parameter(model, function, loader),
        **_early_return_parameter(model, function, loader),
    )
    mode = _mode_parameter(model, function, single[0]) if ranks and single else None
    if mode is None:
        return described
    other = single[0]
    return dataclasses.replace(
        described,
        mode_parameter=mode,
        mode_position=_caller_position(function, mode),
        mode_default=_default_truth(function, mode),
        single_process_sampler=_sampler_verdict(model, other),
        single_process_shuffle=other.shuffle,
        single_process_where=f"{display_name}:{line_of(facts, other.site.node)}",
    )


def _built_for(facts, function, loader) -> bool:
    """The loader is built in the function, or, for a method, in another method of its class
    that keeps it on the object (`build()` sets `self.train_loader`, `get_loaders()` returns it)."""
    if loader.site.context.scope is function.scope:
        return True
    if function.class_name is None:
        return False
    builder = facts.function_of(loader.site.context.scope)
    return builder is not None and builder.class_name == function.class_name and builder.scope.parent is function.scope.parent


def _mode_parameter(model: "ModuleModel", function, loader) -> Optional[str]:
    """The parameter of `function` whose test on the run's mode (`if not distributed:`, `if
    distributed: ... else:`) puts `loader` on the single-process path."""
    import libcst as cst

    for branch, _ in loader.site.context.branches:
        test = branch.test
        tested = test.expression if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not) else test
        if not isinstance(tested, cst.Name) or tested.value not in function.params:
            continue
        if model.ranks.distributed_polarity(tested, function.scope) is True:
            return tested.value
    return None


def _shuffle_parameter(model: "ModuleModel", function, loader) -> dict:
    """FactoryLoader's shuffling_sampler and shuffle_* fields, from what each DistributedSampler
    reaching `loader` gets for `shuffle` in this function (`def build(ds, shuffle=True):
    DataLoader(ds, sampler=make_sampler(ds, shuffle=shuffle))`, where the module's helper hands it
    to `DistributedSampler(ds, shuffle=shuffle)`): a literal False there shuffles nothing; a
    parameter of the function leaves it to the caller's value."""
    from ddplint.analysis.syntax import argument, is_false

    data = model.data
    params = function.params
    names: set[Optional[str]] = set()
    shuffles = False
    for sampler in data.samplers:
        if not (sampler.shuffles and loader in sampler.loaders):
            continue
        value = argument(sampler.site.node, "shuffle", 3)
        sources = data.flow.sources(value, sampler.site.context.scope) if value is not None else []
        # the values that reach it through this function's calls (a helper's other callers aside)
        here = [s for s in sources if not s.via or any(site.context.scope is function.scope for site in s.via)]
        if not here:
            return {"shuffling_sampler": True}
        for source in here:
            if source.parameter_of is function and source.parameter in params:
                names.add(source.parameter)
            elif not is_false(source.node):
                return {"shuffling_sampler": True}  # shuffles whatever the caller passes
        shuffles = shuffles or bool(names)
    if not shuffles or len(names) != 1:
        return {"shuffling_sampler": shuffles and bool(names)}
    name = names.pop()
    assert name is not None
    return {
        "shuffling_sampler": True,
        "shuffle_parameter": name,
        "shuffle_position": _caller_position(function, name),
        "shuffle_default": _default_truth(function, name),
    }


def _early_return_parameter(model: "ModuleModel", function, loader) -> dict:
    """FactoryLoader's early_return_* fields: an `if p:` / `if not p:` on a parameter, in the
    function's own body before the statement that builds `loader`, whose arm ends in `return`
    and builds no loader of its own (that one is a mode parameter's other loader)."""
    import libcst as cst

    body = function.node.body.body if isinstance(function.node.body, cst.IndentedBlock) else ()
    index = next((i for block, i in loader.site.context.path if block is body), None)
    if index is None:
        return {}
    for statement in body[:index]:
        if not isinstance(statement, cst.If) or not isinstance(statement.body, cst.IndentedBlock):
            continue
        if not statement.body.body or not _ends_in_return(statement.body.body[-1]):
            continue
        arm = statement.body.body
        if any(block is arm for other in model.data.loaders for block, _ in other.site.context.path):
            continue
        test, when = statement.test, True
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            test, when = test.expression, False
        if isinstance(test, cst.Name) and test.value in function.params:
            return {
                "early_return_parameter": test.value,
                "early_return_position": _caller_position(function, test.value),
                "early_return_when": when,
            }
    return {}


def _ends_in_return(statement) -> bool:
    import libcst as cst

    return isinstance(statement, cst.SimpleStatementLine) and any(isinstance(s, cst.Return) for s in statement.body)


def _caller_position(function, name: str) -> int:
    """Where a caller passes parameter `name` positionally (a method's `self` is bound)."""
    return function.params.index(name) - (1 if function.class_name is not None else 0)


def _default_truth(function, name: str) -> Optional[bool]:
    """Whether the parameter's default is true (`distributed=False` -> False, `=None` -> False);
    None with no default or one that is not a literal."""
    from ddplint.analysis.syntax import is_false, is_none, is_true

    params = function.node.params
    for param in (*params.posonly_params, *params.params, *params.kwonly_params):
        if param.name.value == name and param.default is not None:
            if is_true(param.default):
                return True
            if is_false(param.default) or is_none(param.default):
                return False
    return None


def _sampler_verdict(model: "ModuleModel", loader) -> "SamplerKind":
    """The module's own exemptions, applied where the loader is built: a framework, an iterable
    or hand-sharded dataset, all count as a sampler for the caller."""
    from ddplint.analysis.loaders import SamplerKind

    data = model.data
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
NOTHING_RECORDED = ModuleSummary()


def line_of(facts: "ModuleFacts", node: cst.CSTNode) -> int:
    """Positions are resolved only for modules that do export a loader factory."""
    from ddplint.positions import positions_of

    return positions_of(facts.module, [node])[node].start.line


def summary_of(data: bytes, path: str) -> Optional[ModuleSummary]:
    facts = facts_of(data)
    if facts is None:
        return None
    from ddplint.analysis.model import ModuleModel

    try:
        return summarise(ModuleModel(facts), os.path.basename(path))
    except Exception:  # RecursionError, or a bug in a summary: that module offers nothing, the
        return None  # run goes on (one module must not cost every file its findings)


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


def screened_source(path: str) -> Optional[bytes]:
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


# The kind outlines are kept under across runs: renamed whenever what an outline holds changes
# (narrowed by `offerable_names`; then keeping current-device work; then only returns that may be a
# dict), so that no run reads one another computation wrote.
OUTLINE_KIND = "outline 4"


def outline_from(
    data: bytes, path: str, parses_safely: Callable[[bytes, str], bool], narrowed: bool = True
) -> tuple[bool, Optional[frozenset[str]]]:
    """The outline of a module whose source passed `screened_source`: whether it has a summary,
    and the names that summary may be asked about (None: any). The functions and classes of the
    compiled code, `narrowed` to those that may offer something (`offerable_names`; the
    equivalence checks compare with the outline without that)."""
    if not parses_safely(data, path):  # also keeps libcst away from pathological nesting
        return False, None
    if not _SUMMARY_EVIDENCE.search(data):
        return True, frozenset()  # it names none of the things a summary records
    code = compiled(data, path)
    if code is None:
        return True, None
    recordable = _recordable_names(code, generators_only=not _SUMMARY_WORDS.search(data))
    offerable = offerable_names(data) if narrowed else None
    return True, recordable if offerable is None else recordable & offerable


def compiled(data: bytes, path: str) -> Optional[CodeType]:
    """A project module's code, or None where CPython refuses it (its own warnings not shown:
    they are not ddplint's to print)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return compile(data, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


# The names the models behind `summarise` recognise a call, a class or a method by (their last
# part: a qualified name keeps it, whatever the import spelling), and `getattr`'s string for
# `set_epoch`: a function or class that names none of them, reaches no definition that does and
# uses no module-level name bound with one has none of those entries.
_OFFER_WORDS = frozenset(
    name.rsplit(".", 1)[-1]
    for name in (
        _SUMMARY_CALLS | _SUMMARY_BASES | PROCESS_GROUP_STARTERS | SET_DEVICE | SPAWNERS | CHECKPOINT_COLLECTIVES
        | LIGHTNING_MODULE_COLLECTIVES | LIGHTNING_SYNCED_LOGGING | frozenset(FRAMEWORK_COLLECTIVES)
        | frozenset(SYNCHRONISING_METHODS) | frozenset().union(*SYNCHRONISING_METHODS.values()) | DATALOADER
        | DISTRIBUTED_SAMPLER | ITERABLE_DATASETS | WHOLE_DATASET_SAMPLERS | DISTRIBUTED_ENTRY_POINTS
        | {"step", "forward"}  # a loop that steps the model (`optimizer.step()`), a forward
    )
)
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
# The classes whose subclasses a summary records (DataLoader, IterableDataset, DistributedSampler,
# DistributedDataParallel subclasses), by the last part of their names.
_RECORDED_BASES = frozenset(
    name.rsplit(".", 1)[-1] for name in DATALOADER | ITERABLE_DATASETS | DISTRIBUTED_ENTRY_POINTS | _SUMMARY_BASES
)
# Calls that work on the current CUDA device (the summary's `current_device_work`, read by
# devices.offered_current_device_work): the current-device queries, a bare barrier, `.cuda()`;
# a string constant naming "cuda" stands for `.to("cuda")` and `device="cuda"`; a loader pinning
# memory (`pin_memory=True`) is told by its keyword (`_Statement`).
_CURRENT_DEVICE_WORDS = frozenset(name.rsplit(".", 1)[-1] for name in CURRENT_DEVICE_CALLS | BARRIER_COLLECTIVES) | {"cuda"}
# Calls that step a model (`loss.backward()`, `optimizer.step()`); a call named for training
# (`train_step`) counts too (training.loop_trains).
_TRAINING_WORDS = frozenset({"backward", "step"})
_LOADER_CLASS_NAMES = frozenset(name.rsplit(".", 1)[-1] for name in DATALOADER)


def offerable_names(data: bytes) -> Optional[frozenset[str]]:
    """The functions and classes a summary of the module could record something for, read off
    CPython's tree (None where it does not parse): a necessary condition, never the summary.
    Each top-level statement is judged whole (a function with its nested code, a class with its
    methods, an `if` with the definitions under it), and every function and class it defines
    counts (methods too: `Class.method` entries are asked for by the class).

    A function (or another statement) may offer something if its code names a call, class or
    method a summary entry is recognised by (`_OFFER_WORDS`, or a call named for training:
    `train_step`), yields (a generator re-iterating a loader), calls a parameter or a `forward`
    (runs a module it is given), builds a dict (DataLoader keyword arguments), returns a tuple
    (samplers over the whole dataset or None in it), or uses a name that such a statement
    defines or binds at module level (a helper reaching one, `start =
    dist.init_process_group`). A class is recorded only as a subclass of a class summaries
    record (`_RECORDED_BASES`, through the module's own classes and aliases) or for a method
    that loops over a loader stepping the model (a `for` loop, and a training call in the
    class or in a function it uses)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    statements = [_Statement(node) for node in tree.body]
    every = [True] * len(statements)
    naming = _closed(statements, [s.names_a_call for s in statements], every)
    forwarding = _closed(statements, [s.calls_a_parameter for s in statements], [s.hands_on_a_parameter for s in statements])
    dicts = _dicts_returned(statements)
    training = _closed(statements, [s.trains for s in statements], every)
    on_the_current_device = _closed(statements, [s.works_on_the_current_device for s in statements], every)
    derived = _derived_classes(statements)
    names: set[str] = set()
    for position, statement in enumerate(statements):
        trains = statement.loops and training[position]
        if statement.is_class:
            offers = (
                not statement.defines.isdisjoint(derived) or trains or on_the_current_device[position]
                or statement.returns_a_loader
            )
        else:
            offers = (
                naming[position] or forwarding[position] or dicts[position] or trains or statement.own_entry
                or on_the_current_device[position]
            )
        if offers:
            names |= statement.defines
    return frozenset(names)


def _closed(statements: list["_Statement"], marked: list[bool], receives: list[bool]) -> list[bool]:
    """`marked`, extended to every statement that `receives` and uses a name a marked statement
    defines or binds at module level, to a fixed point."""
    marked = list(marked)
    changed = True
    while changed:
        changed = False
        bound: set[str] = set()
        for statement, yes in zip(statements, marked):
            if yes:
                bound |= statement.binds
        for position, statement in enumerate(statements):
            if not marked[position] and receives[position] and not statement.uses.isdisjoint(bound):
                marked[position] = changed = True
    return marked


def _dicts_returned(statements: list["_Statement"]) -> list[bool]:
    """The statements that may return a dict display (DataLoader keyword arguments): one they
    build, one a helper they use returns, or one their callers in the module hand them (a
    value is followed back from a parameter to the call sites' arguments, through functions
    that hand it on)."""
    marked = [s.builds_a_dict for s in statements]
    changed = True
    while changed:
        changed = False
        bound: set[str] = set()
        used: set[str] = set()
        for statement, yes in zip(statements, marked):
            if yes:
                bound |= statement.binds
                used |= statement.uses
        for position, statement in enumerate(statements):
            if marked[position]:
                continue
            returned = statement.returns_a_value and not statement.uses.isdisjoint(bound)
            handed = (statement.returns_a_value or statement.hands_on_a_parameter) and not statement.binds.isdisjoint(used)
            if returned or handed:
                marked[position] = changed = True
    return [yes and statement.may_return_a_dict for statement, yes in zip(statements, marked)]


# Returned values the summary's value flow may follow to a dict display, or one: a name, an
# attribute, a call (a helper's return), an item of a literal container. Anything else (a
# comparison, a constant, arithmetic) is its own source and never a dict display
# (samplers.returned_loader_kwargs), whatever its callers hand the function.
_MAY_BE_A_DICT = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Dict, ast.DictComp, ast.NamedExpr)


def _may_be_a_dict(value: ast.expr) -> bool:
    if type(value) is ast.IfExp:
        return _may_be_a_dict(value.body) or _may_be_a_dict(value.orelse)
    if type(value) is ast.BoolOp and type(value.op) is ast.Or:
        return any(_may_be_a_dict(side) for side in value.values)
    return isinstance(value, _MAY_BE_A_DICT)


def _derived_classes(statements: list["_Statement"]) -> set[str]:
    """The module's classes (at any depth: summaries know classes by name) that derive from a
    class in `_RECORDED_BASES`, directly, through another of them, or through a module-level
    name bound to one (`from torch.utils.data import DataLoader as Loader`)."""
    known = set(_RECORDED_BASES)
    derived: set[str] = set()
    changed = True
    while changed:
        changed = False
        for statement in statements:
            if not isinstance(statement.node, _DEFINITIONS) and not statement.binds <= known and not statement.uses.isdisjoint(known):
                known |= statement.binds
                changed = True
            for name, bases in statement.classes:
                if name not in derived and not bases.isdisjoint(known):
                    derived.add(name)
                    known.add(name)
                    changed = True
    return derived


class _Statement:
    """What one top-level statement defines, binds at module level and uses, and whether its
    own code may make a summary entry (`offerable_names`)."""

    def __init__(self, statement: ast.stmt) -> None:
        self.node = statement
        self.is_class = isinstance(statement, ast.ClassDef)
        self.defines: set[str] = set()
        self.uses: set[str] = set()
        self.classes: list[tuple[str, set[str]]] = []  # every class in it: (name, names its bases use)
        self.loops = False
        # The names that can make an entry: those called, aliased (`f = dist.all_reduce`), handed
        # on (`partial(dist.all_reduce, ...)`), derived from, imported, or given to getattr.
        # Elsewhere in a function (`x.device`, `self.step += 1`) they name no call.
        words: set[str] = set()
        read: set[str] = set()
        parameters: set[str] = set()
        called: set[str] = set()
        handed: set[str] = set()  # names given to a call as arguments
        declared: set[str] = set()  # `global` names of the code it defines: bound at module level
        returns_a_tuple = returns_a_value = may_return_a_dict = generator = builds_a_dict = pins_memory = False
        for node in _walk(statement):
            kind = type(node)  # exact types: the walk visits hundreds of thousands of nodes
            if kind is ast.Name:
                self.uses.add(node.id)
                if type(node.ctx) is not ast.Store:
                    read.add(node.id)
            elif kind is ast.Attribute:
                self.uses.add(node.attr)
                if type(node.ctx) is not ast.Store:
                    read.add(node.attr)
            elif kind is ast.Constant:
                if type(node.value) is str:
                    self.uses.add(node.value)
                    words.add(node.value)
            elif kind is ast.Call:
                name = _last_name(node.func)
                if name is not None:
                    called.add(name)
                words.update(filter(None, map(_last_name, node.args)))
                handed.update(a.id for a in (*node.args, *(k.value for k in node.keywords)) if type(a) is ast.Name)
                handed.update(a.value.id for a in node.args if type(a) is ast.Starred and type(a.value) is ast.Name)
                # `DataLoader(..., pin_memory=True)` pins through the current device (devices._pins_memory)
                pins_memory = pins_memory or any(
                    k.arg == "pin_memory" and type(k.value) is ast.Constant and k.value.value is True for k in node.keywords
                )
            elif kind is ast.ClassDef:
                self.defines.add(node.name)
                bases = _names_in([*node.bases, *node.keywords])
                self.classes.append((node.name, bases))
                words |= bases
            elif kind is ast.FunctionDef or kind is ast.AsyncFunctionDef or kind is ast.Lambda:
                if kind is not ast.Lambda:
                    self.defines.add(node.name)
                arguments = node.args
                parameters.update(a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs))
                parameters.update(a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None)
            elif kind is ast.Import or kind is ast.ImportFrom:
                for alias in node.names:
                    self.uses.update(alias.name.split("."))
                    if kind is ast.ImportFrom:  # `import a.b` binds a module, never a call
                        words.add(alias.name)
            elif kind is ast.Assign or kind is ast.AnnAssign or kind is ast.NamedExpr:
                name = _last_name(node.value) if node.value is not None else None
                if name is not None:
                    words.add(name)
            elif kind is ast.Yield or kind is ast.YieldFrom:
                generator = True
            elif kind is ast.Dict:
                builds_a_dict = True
            elif kind is ast.Return:
                if node.value is not None:
                    returns_a_value = True
                    returns_a_tuple = returns_a_tuple or type(node.value) is ast.Tuple
                    may_return_a_dict = may_return_a_dict or _may_be_a_dict(node.value)
            elif kind is ast.For or kind is ast.AsyncFor:
                self.loops = True
            elif kind is ast.Global:
                declared.update(node.names)
        if not isinstance(statement, _DEFINITIONS):  # module-level code: every name it reads
            words |= read
        hands_on_a_parameter = not handed.isdisjoint(parameters)
        words |= called
        # What makes an entry of its own or of a statement that uses it (`_closed`): a call a
        # summary recognises (reached through helpers), a parameter run as a module (handed on by
        # a caller's parameter), a dict display (returned by a caller), a call that steps a model.
        self.names_a_call = not words.isdisjoint(_OFFER_WORDS)
        self.calls_a_parameter = not called.isdisjoint(parameters)
        self.builds_a_dict = builds_a_dict or "dict" in called
        self.trains = not called.isdisjoint(_TRAINING_WORDS) or any("train" in name.lower() for name in called)
        # A method that builds a DataLoader and returns a value: a loader factory for the callers
        # of `Class(...).method()`.
        self.returns_a_loader = returns_a_value and not called.isdisjoint(_LOADER_CLASS_NAMES)
        self.works_on_the_current_device = (
            pins_memory or not called.isdisjoint(_CURRENT_DEVICE_WORDS) or any(word.startswith("cuda") for word in words)
        )
        # What a caller needs to take the last three from a helper: arguments that are its own
        # parameters, a return of a value.
        self.hands_on_a_parameter = hands_on_a_parameter
        self.returns_a_value = returns_a_value
        self.may_return_a_dict = may_return_a_dict
        # What makes an entry of its own only: a generator, a tuple returned.
        self.own_entry = generator or returns_a_tuple
        # A class is known by its name (and its nested classes'), never by its methods' names:
        # those are reached through the class (`self.method()` inside it, `Class(...)` outside).
        inner_names = {name for name, _ in self.classes} if self.is_class else self.defines
        self.binds = inner_names | declared | _module_level_bindings(statement)


def _walk(root: ast.AST) -> list[Any]:
    """Every node below `root` (itself included), without the Load / Store markers `ast.walk`
    also visits: a quarter of the nodes of a module. (Any: the caller tells them apart by exact
    type, which mypy does not narrow on.)"""
    found: list[Any] = []
    stack = [root]
    while stack:
        node = stack.pop()
        found.append(node)
        for name in node._fields:
            if name == "ctx":
                continue
            value = getattr(node, name, None)
            if type(value) is list:
                stack.extend(item for item in value if isinstance(item, ast.AST))
            elif isinstance(value, ast.AST):
                stack.append(value)
    return found


def _last_name(node: ast.AST) -> Optional[str]:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _names_in(nodes: list[ast.AST]) -> set[str]:
    """The names and attribute names used in these expressions."""
    found: set[str] = set()
    for node in nodes:
        for inner in ast.walk(node):
            if isinstance(inner, ast.Name):
                found.add(inner.id)
            elif isinstance(inner, ast.Attribute):
                found.add(inner.attr)
    return found


def _module_level_bindings(statement: ast.stmt) -> set[str]:
    """The module-level names a top-level statement binds (assignments, imports, loop and `with`
    targets), not the local names of the code it defines (a definition's own name is among
    `defines`, its `global` names are read by `_Statement`)."""
    bound: set[str] = set()
    stack: list[ast.AST] = [statement]
    while stack:
        node = stack.pop()
        if isinstance(node, (*_DEFINITIONS, ast.Lambda)):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((alias.asname or alias.name.split(".")[0]) for alias in node.names)
        stack.extend(ast.iter_child_nodes(node))
    return bound


def functions_reaching_a_starter(module: CodeType) -> set[str]:
    """The module-level functions of a compiled module whose code names a process-group starter,
    or names a function or method of the module that does, and so on: a superset of what
    `summarise` records, where calls are followed by their targets."""
    return _functions_reaching(module, _STARTER_NAMES)


def functions_reaching_a_collective(module: CodeType) -> set[str]:
    """The same for the collectives (`reduce_dict` calling `dist.all_reduce`): a superset of the
    summary's `collectives`."""
    return _functions_reaching(module, _COLLECTIVE_NAMES)


def may_offer_a_collective(data: bytes) -> bool:
    """Whether a module's text could hold a function making a collective: it imports a package
    that makes them (torch.distributed, Accelerate, DeepSpeed, Horovod) and names a collective.
    The import, not the word: `reduce` / `gather` / `scatter` are also tensor operations, and a
    docstring mentioning distributed training makes no collective."""
    return _COLLECTIVE_PACKAGE_IMPORT.search(data) is not None and _COLLECTIVE_WORD.search(data) is not None


def _functions_reaching(module: CodeType, targets: frozenset[str]) -> set[str]:
    uses: dict[str, set[str]] = {}  # function or method name -> every name its code (nested code too) uses
    stack = [(module, "")]
    while stack:
        code, owner = stack.pop()
        for const in code.co_consts:
            if isinstance(const, CodeType):
                name = owner if owner and const.co_flags & inspect.CO_OPTIMIZED and const.co_name.startswith("<") else const.co_name
                uses.setdefault(name, set()).update(const.co_names, const.co_varnames, const.co_freevars, const.co_cellvars)
                stack.append((const, name))
    reaching = set(targets)
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


def facts_of(data: bytes) -> Optional["ModuleFacts"]:
    import libcst as cst

    from ddplint.analysis.facts import build_facts
    from ddplint.analysis.syntax import parse_module

    try:
        module = parse_module(data)
        return build_facts(module, data.decode(module.encoding, errors="replace"))
    except (RecursionError, MemoryError, cst.ParserSyntaxError, ValueError):
        return None
