"""Which DataLoaders a file builds, what sampler each is given, and whether something other than
its sampler shards it (a framework that re-wraps it, a hand-sharded or caller-provided dataset).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Optional

import libcst as cst

from ddplint.analysis.options import declared, last_part
from ddplint.analysis.syntax import (
    argument,
    dotted_name,
    double_star_args,
    has_star_args,
    identifier_words,
    is_false,
    is_none,
    is_true,
    keyword_arg,
    last_name,
    receiver,
    string_value,
    walk,
)
from ddplint.analysis.torch_api import (
    ACCELERATE_PACKAGES,
    ACCELERATE_SINKS,
    ALWAYS_SINKS,
    DATALOADER,
    FRAMEWORK_LOADER_HOOKS,
    LIGHTNING_PACKAGES,
    LIGHTNING_SINKS,
    MODEL_PARALLEL_SETUP,
    SAMPLER_SLOTS,
    SHARDING_FUNCTIONS,
    SUBSET_SAMPLERS,
    WHOLE_DATASET_SAMPLERS,
)
from ddplint.analysis.where import Where

if TYPE_CHECKING:
    from ddplint.analysis.records import Binding, CallSite, Scope
    from ddplint.analysis.where import WhereModel

# Methods that grow a container in place (`buffer.append(experience)`).
GROWING_METHODS = frozenset({"append", "extend", "add", "push", "insert", "put"})


class SamplerKind(enum.Enum):
    """What a loader is given to choose its samples."""

    PRESENT = "present"  # a sampler (or one the tool cannot see, such as **kwargs): assume it shards
    ABSENT = "absent"  # none: every rank iterates the whole dataset
    WHOLE_DATASET = "whole-dataset"  # a RandomSampler and the like: no sharding either


@dataclass(eq=False)
class LoaderInfo:
    site: "CallSite" = field(repr=False)
    sampler: SamplerKind
    dataset: Optional[cst.BaseExpression] = field(repr=False)
    shuffle: Optional[bool] = None  # True / False literal, None when not passed or not a literal
    names: set[str] = field(default_factory=set)  # words of the names it is stored under
    # For a loader built by a function of another project module (`build_loader(ds)`): where
    # ("data.py:12"). `site` is then the call of that function in this file.
    built_in: Optional[str] = None
    # Such a factory's loader for the single-process run, which the call's mode argument picks
    # (`build_loader(ds, distributed=False)`): the factory's module never judges that choice.
    single_process_arm: bool = False


def _returns_before_the_loader(site: "CallSite", factory) -> bool:
    """The call hands the factory the value of its early-return parameter
    (`get_data(..., return_datasets=True)`): it gets what the factory returns before building
    its loader, not the loader."""
    if factory.early_return_parameter is None or has_star_args(site.node) or double_star_args(site.node):
        return False
    value = argument(site.node, factory.early_return_parameter, factory.early_return_position)
    if value is None:
        return False
    return is_true(value) if factory.early_return_when else is_false(value)


def constructs(facts, node: Optional[cst.CSTNode], qualified, local: set[str]) -> bool:
    """`node` is a call of one of these classes (qualified names, or classes of this file)."""
    return isinstance(node, cst.Call) and facts.is_instance_of(node, qualified, local)


def parent_constructor_calls(facts, qualified) -> list["CallSite"]:
    """`super().__init__(...)` in the `__init__` of a class of this file whose direct base is one
    of `qualified`: the subclass building itself through that very class, with the same
    arguments and positions as a call of it (`class DPLoader(DataLoader)` calling
    `super().__init__(dataset=..., batch_sampler=..., drop_last=...)`). A base of this file in
    between may take the arguments differently, so it does not count."""
    found: list["CallSite"] = []
    for function in facts.functions:
        info = facts.classes.get(function.class_name or "")
        if function.name != "__init__" or info is None:
            continue
        if not any(not qualified.isdisjoint(facts.qualified_names(base)) for base in info.bases):
            continue
        found.extend(site for site in facts.calls_by_function.get(id(function), []) if _calls_super_init(site.node))
    return found


def _calls_super_init(call: cst.Call) -> bool:
    func = call.func
    return (
        isinstance(func, cst.Attribute)
        and func.attr.value == "__init__"
        and isinstance(func.value, cst.Call)
        and dotted_name(func.value.func) == "super"
    )


class Loaders:
    def __init__(self, facts, flow, ranks, where: Optional["WhereModel"] = None) -> None:
        self.facts = facts
        self.flow = flow
        self.ranks = ranks
        self.where = where

    @cached_property
    def loader_classes(self) -> set[str]:
        """DataLoader subclasses of this file: drop-ins, built like a DataLoader."""
        return self.facts.subclasses_of(DATALOADER)

    @cached_property
    def all(self) -> list[LoaderInfo]:
        sites = self.facts.calls_constructing(DATALOADER, self.loader_classes)
        known = {id(site) for site in sites}
        sites += [site for site in self._project_class_calls if id(site) not in known]
        out = [self._describe(site) for site in sites]
        out.extend(self.from_project)
        return out

    @cached_property
    def _project_class_calls(self) -> list["CallSite"]:
        """Calls of DataLoader subclasses another project module defines (`MyLoader(ds)` with
        `from .loaders import MyLoader`): built like a DataLoader."""
        project = self.facts.project
        if project is None or not self.facts.imports.bindings:
            return []
        return [site for site in self.facts.calls if project.loader_class(self.facts, site.node.func) is not None]

    @cached_property
    def from_project(self) -> list[LoaderInfo]:
        """Calls of loader factories of the project's other modules (`build_loader(ds)` from
        `.data`), described from the factory's summary, with the dataset the caller passes."""
        project = self.facts.project
        if project is None:
            return []
        out = []
        for site in self.facts.calls:
            factory = project.loader_factory(self.facts, site)
            if factory is None or _returns_before_the_loader(site, factory):
                continue
            dataset = None
            if factory.dataset_parameter is not None:
                dataset = argument(site.node, factory.dataset_keyword, factory.dataset_parameter)
            words = {w for name in self.facts.assigned_to.get(id(site.node), ()) for w in identifier_words(name)}
            words.update(identifier_words(site.name or ""))
            if self._picks_single_process_loader(site, factory):
                assert factory.single_process_sampler is not None
                out.append(
                    LoaderInfo(
                        site, factory.single_process_sampler, dataset, factory.single_process_shuffle, words,
                        built_in=factory.single_process_where, single_process_arm=True,
                    )
                )
                continue
            out.append(LoaderInfo(site, factory.sampler, dataset, factory.shuffle, words, built_in=factory.where))
        return out

    def _picks_single_process_loader(self, site: "CallSite", factory) -> bool:
        """The call gives the factory's mode parameter a value that is false in a rank of a
        distributed run (`distributed=False`, nothing over a false default, `world_size == 1`),
        so the factory returns its single-process loader (`if not distributed: return
        DataLoader(ds, shuffle=True)`). A value the tool cannot read is taken as distributed."""
        if factory.mode_parameter is None:
            return False
        if has_star_args(site.node) or double_star_args(site.node):
            return False
        value = argument(site.node, factory.mode_parameter, factory.mode_position)
        if value is None:
            return factory.mode_default is False
        if is_true(value):
            return False
        if is_false(value) or is_none(value):
            return True
        return self.ranks.distributed_polarity(value, site.context.scope) is False

    def _describe(self, site: "CallSite") -> LoaderInfo:
        call = site.node
        shuffle_arg = argument(call, "shuffle", 2)
        shuffle = True if is_true(shuffle_arg) else False if is_false(shuffle_arg) else None
        return LoaderInfo(
            site=site,
            sampler=self._sampler_kind(site),
            dataset=argument(call, "dataset", 0),
            shuffle=shuffle,
            names=self._stored_names(site),
        )

    def _sampler_kind(self, site: "CallSite") -> SamplerKind:
        call, scope = site.node, site.context.scope
        if self._subclass_brings_its_own_sampler(call):
            return SamplerKind.PRESENT
        passed = [e for e in (argument(call, "sampler", 3), argument(call, "batch_sampler", 4)) if e is not None]
        if has_star_args(call):
            return SamplerKind.PRESENT  # positional *args: cannot tell, so assume the author passed one
        for kwargs in double_star_args(call):
            keys = self.dict_keys(kwargs, scope)
            if keys is None or not keys.isdisjoint(SAMPLER_SLOTS):
                return SamplerKind.PRESENT
        kind = SamplerKind.ABSENT
        for expr in passed:
            from_helpers = self._unpacked_from_unsharding_helpers(expr, scope)
            if from_helpers is not None:
                kind = SamplerKind.WHOLE_DATASET if from_helpers else kind
                continue
            # what a rank may pass: a sampler only the single-process path builds is never it
            # (`None if args.distributed else DistributedSampler(ds)`, the arms swapped)
            sources = [s for s in self.flow.sources(expr, scope) if not self._built_off_the_ranks(s)]
            if all(is_none(s.node) for s in sources):
                continue
            if all(self._samples_whole_dataset(s) for s in sources):
                kind = SamplerKind.WHOLE_DATASET
                continue
            return SamplerKind.PRESENT
        return kind

    def _built_off_the_ranks(self, source) -> bool:
        """A value only the single-process path builds (analysis/where.py): the arm of `None if
        args.distributed else DistributedSampler(ds)` that a rank never takes, or a call in the
        `else:` of `if args.distributed:` (or in a function only that path calls)."""
        where, node = self.where, source.node
        if where is None or node is None:
            return False
        if where.value_on_single_process_path(node):
            return True
        site = self.flow.call_site(node) if isinstance(node, cst.Call) else None
        return site is not None and where.of(site.context) is Where.SINGLE_PROCESS

    def sampler_built_off_the_ranks(self, loader: LoaderInfo) -> Optional[cst.CSTNode]:
        """The sampler given to this loader that only the single-process path builds, when the
        ranks get none (the test of a `sampler=... if distributed else ...` the wrong way round);
        for the message."""
        if loader.built_in is not None or loader.sampler is SamplerKind.PRESENT:
            return None
        call, scope = loader.site.node, loader.site.context.scope
        for expr in (argument(call, "sampler", 3), argument(call, "batch_sampler", 4)):
            if expr is None:
                continue
            for source in self.flow.sources(expr, scope):
                if not is_none(source.node) and self._built_off_the_ranks(source):
                    return source.node
        return None

    def _unpacked_from_unsharding_helpers(self, expr: cst.BaseExpression, scope) -> Optional[bool]:
        """`train_ds, valid_ds, sampler = get_datasets(...)` where every such assignment calls a
        function of another project module that returns, in that place, only None or a sampler
        over the whole dataset (`WeightedRandomSampler(...)`): nothing is sharded. Whether one
        of them may return such a sampler; None when that is not what `expr` is."""
        project = self.facts.project
        if project is None or not isinstance(expr, cst.Name):
            return None
        bindings = scope.lookup(expr.value)
        builds = False
        for binding in bindings:
            if binding.kind != "unpack" or binding.index is None or not isinstance(binding.value, cst.Call):
                return None
            unsharded, built = project.unsharded_sampler_places(self.facts, binding.value)
            if binding.index not in unsharded:
                return None
            builds = builds or binding.index in built
        return builds if bindings else None

    def unsharding_helper_of(self, loader: LoaderInfo) -> Optional[str]:
        """The name of the helper call (`get_datasets`) the loader's sampler is unpacked from,
        when `_unpacked_from_unsharding_helpers` is what made it a whole-dataset sampler."""
        call, scope = loader.site.node, loader.site.context.scope
        for expr in (argument(call, "sampler", 3), argument(call, "batch_sampler", 4)):
            if expr is None or not self._unpacked_from_unsharding_helpers(expr, scope):
                continue
            assert isinstance(expr, cst.Name)
            value = scope.lookup(expr.value)[0].value
            if isinstance(value, cst.Call):
                return dotted_name(value.func) or "the helper"
        return None

    def unsharded_sampler_places(self, function) -> tuple[frozenset[int], frozenset[int]]:
        """(the places of the tuples `function` returns that hold None or a sampler over the
        whole dataset in every return, those of them where some return builds such a sampler).
        For another module's callers."""
        places: Optional[set[int]] = None
        built: set[int] = set()
        for value, _ in function.returns:
            if not isinstance(value, cst.Tuple):
                return frozenset(), frozenset()
            here = set()
            for index, element in enumerate(value.elements):
                sources = self.flow.sources(element.value, function.scope)
                if sources and all(is_none(s.node) or self._samples_whole_dataset(s) for s in sources):
                    here.add(index)
                    if any(not is_none(s.node) for s in sources):
                        built.add(index)
            places = here if places is None else places & here
        return frozenset(places or ()), frozenset(built & (places or set()))

    def _subclass_brings_its_own_sampler(self, call: cst.Call) -> bool:
        """A DataLoader subclass of this file or of another project module that picks its
        samples itself (`class_picks_its_samples`)."""
        callee = dotted_name(call.func) or ""
        if callee in self.loader_classes:
            return self.class_picks_its_samples(callee)
        project = self.facts.project
        return project is not None and bool(project.loader_class(self.facts, call.func))

    def class_picks_its_samples(self, name: str) -> bool:
        """Whether this file's DataLoader subclass `name` hands super().__init__ a sampler or
        batch sampler in its `__init__`, or replaces `__iter__`."""
        classes = {info.name for info in self.facts.class_lineage(name)}
        for function in self.facts.functions:
            if function.class_name not in classes:
                continue
            if function.name == "__iter__":
                return True
            if function.name != "__init__":
                continue
            for inner in self.facts.calls_by_function.get(id(function), []):
                if inner.name == "__init__" and (
                    argument(inner.node, "sampler", 3) is not None or argument(inner.node, "batch_sampler", 4) is not None
                ):
                    return True
        return False

    def _samples_whole_dataset(self, source) -> bool:
        """RandomSampler / WeightedRandomSampler, or a SubsetRandomSampler whose indices do not
        depend on the rank (with rank-dependent indices it is the usual hand-made sharding)."""
        if constructs(self.facts, source.node, WHOLE_DATASET_SAMPLERS, set()):
            return True
        if constructs(self.facts, source.node, SUBSET_SAMPLERS, set()):
            return not self.ranks.depends_on_rank(source.node, source.scope)
        return False

    def dict_keys(self, expr: cst.BaseExpression, scope, depth: int = 0) -> Optional[set[str]]:
        """The literal keys a `**kwargs` dict may hold, or None if they cannot be known."""
        if depth > 3:
            return None
        keys: set[str] = set()
        for source in self.flow.sources(expr, scope):
            literal = _literal_dict_keys(source.node)
            if literal is None:
                literal = self._keys_from_project(source.node)
            if literal is None:
                return None
            keys |= literal
        name = dotted_name(expr)
        if name is not None:
            added = self._keys_added_later(name, scope, depth)
            if added is None:
                return None
            keys |= added
        keys |= {binding.item for binding in self.items_set_on(expr, scope)}
        return keys

    def _keys_from_project(self, node) -> Optional[set[str]]:
        """The keys of the dict another project module's function returns
        (`get_loader_kwargs(...)`), when its summary knows them all."""
        project = self.facts.project
        if project is None or not isinstance(node, cst.Call):
            return None
        factory = project.loader_kwargs(self.facts, node)
        return set(factory.keys) if factory is not None and factory.keys is not None else None

    def items_set_on(self, expr: cst.BaseExpression, scope) -> list:
        """Item bindings (`d["key"] = v`) anywhere in the file on a dict that `expr` may be,
        also in a helper that builds and returns it (`kwargs["sampler"] = s; return kwargs`)."""
        dicts = {id(source.node) for source in self.flow.sources(expr, scope) if source.node is not None}
        if not dicts:
            return []
        return [
            binding
            for binding, holder in self._item_bindings
            if dicts & {id(s.node) for s in self.flow.sources(holder, binding.scope) if s.node is not None}
        ]

    @cached_property
    def _item_bindings(self) -> list[tuple]:
        """(binding, the dict's name node) for every `d["key"] = v` of the file."""
        out = []
        scopes = [self.facts.module_scope, *(function.scope for function in self.facts.functions)]
        for holder_scope in scopes:
            for bindings in holder_scope.bindings.values():
                for binding in bindings:
                    if binding.kind != "item" or binding.item is None:
                        continue
                    holder = next(
                        (
                            sub.value
                            for sub in walk(binding.node)
                            if isinstance(sub, cst.Subscript) and isinstance(sub.value, cst.Name)
                        ),
                        None,
                    )
                    if holder is not None:
                        out.append((binding, holder))
        return out

    def _keys_added_later(self, name: str, scope, depth: int) -> Optional[set[str]]:
        """Keys put into dict `name` after it is built: `d["k"] = v`, `d.update(k=v)`,
        `d.update(other_dict)`."""
        keys = {b.item for holder in _scopes_up(scope) for b in holder.bindings.get(name, []) if b.kind == "item"}
        for site in self.facts.calls:
            owner = receiver(site.node.func)
            if site.name not in ("update", "setdefault") or owner is None or dotted_name(owner) != name:
                continue
            if site.name == "setdefault" and site.node.args:
                literal = string_value(site.node.args[0].value)
                if literal is None:
                    return None
                keys.add(literal)
            elif site.name == "update":
                for arg in site.node.args:
                    if arg.keyword is not None:
                        keys.add(arg.keyword.value)
                        continue
                    merged = self.dict_keys(arg.value, site.context.scope, depth + 1)
                    if merged is None:
                        return None
                    keys |= merged
            else:
                return None
        return keys

    def entries_under(self, expr: cst.BaseExpression, scope, key: str, depth: int = 0) -> Optional[list]:
        """Every value a `**kwargs` dict may hold under `key`: its literal entries, items set on
        it (`d[key] = v`) and what `d.update(...)` merges in (`d.update(key=v)`, `d.update(other)`
        with `other` read the same way). None when some part of the dict cannot be read (a dict
        from a call, an entry whose key is not literal): an unread part may hold `key` too. Also
        None for a name that holds one of several dicts (`{"batch_sampler": b}` in one arm,
        `{"sampler": s, "batch_size": n}` in the other): their entries never meet."""
        if depth > 3:
            return None
        sources = self.flow.sources(expr, scope)
        if len(sources) != 1:
            return None
        entries = _literal_dict_entries(sources[0].node)
        if entries is None:
            return None
        values: list = list(entries.get(key, []))
        name = dotted_name(expr)
        if name is not None:
            for holder in _scopes_up(scope):
                values += [b.value for b in holder.bindings.get(name, []) if b.kind == "item" and b.item == key]
            for site in self.facts.calls:
                owner = receiver(site.node.func)
                if site.name not in ("update", "setdefault") or owner is None or dotted_name(owner) != name:
                    continue
                if site.name == "setdefault":
                    return None
                for arg in site.node.args:
                    if arg.keyword is not None:
                        values += [arg.value] if arg.keyword.value == key else []
                        continue
                    merged = self.entries_under(arg.value, site.context.scope, key, depth + 1)
                    if merged is None:
                        return None
                    values += merged
        values += [binding.value for binding in self.items_set_on(expr, scope) if binding.item == key]
        return values

    def _stored_names(self, site: "CallSite") -> set[str]:
        """Words of the names a loader is assigned to or handed over as (`train_loader` ->
        {'train', 'loader'}), and of its dataset argument."""
        call = site.node
        words = {word for name in self.facts.assigned_to.get(id(call), ()) for word in identifier_words(name)}
        function = self.facts.function_of(site.context.scope)
        if function is not None and any(call is value for value, _ in function.returns):
            words.update(identifier_words(function.name))
        dataset = argument(call, "dataset", 0)
        if dataset is not None:
            name = dotted_name(dataset)
            if name:
                words.update(identifier_words(name.split(".")[-1]))
        return words

    def sampler_set_afterwards(self, loader: LoaderInfo) -> Optional[cst.CSTNode]:
        """`loader.sampler = DistributedSampler(ds)` (or `.batch_sampler = ...`) after the loader
        is built: DataLoader.__setattr__ refuses both once it is initialised (ValueError
        "sampler attribute should not be set after DataLoader is initialized"), so the loader
        keeps the sampler it was built with and the script stops at that line. The assignment
        statement, for the message."""
        for binding, target in self._sampler_assignments:
            scope = binding.context.scope if binding.context is not None else binding.scope
            # the loader as built, not something wrapping it (which may take a sampler)
            if any(source.node is loader.site.node for source in self.flow.sources(target.value, scope)):
                return binding.node
        return None

    @cached_property
    def _sampler_assignments(self) -> list[tuple]:
        return attribute_assignments(self.facts, SAMPLER_SLOTS)

    # -- who shards for you -------------------------------------------------------------------
    @cached_property
    def model_parallel(self) -> bool:
        """The file sets up tensor or pipeline model parallelism (`initialize_model_parallel`,
        `parallelize_module`): ranks of one model-parallel group share their batches."""
        return any(site.name in MODEL_PARALLEL_SETUP for site in self.facts.calls)

    def handed_to_framework(self, loader: LoaderInfo, stream: bool = False) -> bool:
        """Whether a framework re-wraps this loader with a sampler of its own. For a loader over
        an IterableDataset (`stream`) only Accelerate's `prepare` counts among the calls: it
        splits or dispatches a stream's batches by process, while Lightning's and Fabric's
        `setup_dataloaders` / `fit` inject a DistributedSampler, which a stream cannot take, and
        hand it back unsharded."""
        for function in self.facts.functions:
            if function.name in FRAMEWORK_LOADER_HOOKS and self._may_be_a_framework_class(function.class_name):
                for value, _ in function.returns:
                    if self.flow.feeds(value, function.scope, loader.site.node):
                        return True
        sinks = self._framework_sinks
        if stream:
            sinks = [site for site in sinks if site.name in ACCELERATE_SINKS and self._accelerate_sink(site)]
        for site in sinks:
            for arg in site.node.args:
                if self.flow.feeds(arg.value, site.context.scope, loader.site.node, site.context.branches):
                    return True
        return self._dataset_given_to_deepspeed(loader)

    def _may_be_a_framework_class(self, name: Optional[str]) -> bool:
        """A class whose `train_dataloader()` a framework may call (a LightningDataModule, an HF
        Trainer subclass): one deriving from something other than `object` and the file's own
        base-less classes. A plain `class DataModule:` is the script's own: what its hook
        returns is iterated by whoever calls it."""
        if name is None:
            return False
        for info in self.facts.class_lineage(name):
            for base in info.bases:
                base_name = dotted_name(base) or ""
                if base_name != "object" and base_name not in self.facts.classes:
                    return True
        return False

    def _dataset_given_to_deepspeed(self, loader: LoaderInfo) -> bool:
        """`deepspeed.initialize(training_data=ds)` builds the sharded training loader itself; a
        loader of the script's own over the same dataset is a preview, not the training loader."""
        if loader.dataset is None:
            return False
        mine = {id(s.node) for s in self.flow.sources(loader.dataset, loader.site.context.scope) if s.node is not None}
        for site in self.facts.calls_named("deepspeed.initialize"):
            data = keyword_arg(site.node, "training_data")
            if data is None:
                continue
            theirs = {id(s.node) for s in self.flow.sources(data.value, site.context.scope) if s.node is not None}
            if mine & theirs:
                return True
        return False

    @cached_property
    def _framework_sinks(self) -> list["CallSite"]:
        imports = self.facts.imports
        uses_lightning = imports.imports_any(LIGHTNING_PACKAGES)
        sinks = []
        for site in self.facts.calls:
            name = site.name
            owner = receiver(site.node.func)
            if name in ALWAYS_SINKS:
                sinks.append(site)
            elif name in LIGHTNING_SINKS and owner is not None and uses_lightning:
                sinks.append(site)
            elif name in ACCELERATE_SINKS and self._accelerate_sink(site):
                sinks.append(site)
        return sinks

    def _accelerate_sink(self, site: "CallSite") -> bool:
        """`accelerator.prepare(...)` / `prepare_data_loader(...)`: in a file that imports
        Accelerate, or called on something named an accelerator."""
        owner = receiver(site.node.func)
        owner_words = set(identifier_words(dotted_name(owner) or "")) if owner is not None else set()
        return self.facts.imports.imports_any(ACCELERATE_PACKAGES) or "accelerator" in owner_words

    def is_sharded_by_hand(self, loader: LoaderInfo) -> bool:
        """The dataset is already this rank's part (`Subset(ds, range(rank, n, world))`,
        `ds.shard(num_shards=world, index=rank)`, `split_dataset_by_node(...)`), or the loader
        comes from a factory the configuration declares sharded (`built_by_sharded_factory`)."""
        if self.built_by_sharded_factory(loader):
            return True
        if loader.dataset is None:
            return False
        scope = loader.site.context.scope
        return any(self.split_by_rank(source) for source in self.flow.sources(loader.dataset, scope))

    def split_by_rank(self, source) -> bool:
        """A dataset value that holds this rank's part only: built from the rank
        (`Subset(ds, range(rank, n, world))`) or by a sharding call (`split_dataset_by_node(...)`,
        `.shard(...)`, `nodesplitter=wds.split_by_node`)."""
        if source.node is None:
            return False
        if self.ranks.depends_on_rank(source.node, source.scope):
            return True
        return any(
            isinstance(sub, (cst.Name, cst.Attribute)) and last_name(sub) in SHARDING_FUNCTIONS for sub in walk(source.node)
        )

    def built_by_sharded_factory(self, loader: LoaderInfo) -> bool:
        """The configuration's `sharded-loader-factories` declare that the loader is already this
        rank's shard: it is the result of a call of one (`build_sharded_loader(ds)`), or it is
        built inside one (the factory's own `DataLoader(...)`, by the function's name)."""
        names = self.facts.options.sharded_loader_factories
        if not names:
            return False
        func = loader.site.node.func
        if declared((dotted_name(func), *self.facts.qualified_names(func)), names):
            return True
        factories = {last_part(name) for name in names}
        scope: Optional[Scope] = loader.site.context.scope
        while scope is not None:
            if scope.kind == "function" and scope.name in factories:
                return True
            scope = scope.parent
        return False

    def dataset_comes_from_caller(self, loader: LoaderInfo) -> bool:
        """The dataset (or what it is built from) is a parameter filled in by code this file
        cannot follow: a method of a class the file never instantiates (library code, a
        `Trainer`), or a function handed to something else to call (`pool.submit(fn, ...)`,
        `launch(main, ...)`). That caller decides what the dataset holds and may have sharded it."""
        if loader.dataset is None:
            return False
        scope, arms = loader.site.context.scope, loader.site.context.branches
        for source in self.flow.sources(loader.dataset, scope, arms):
            if self._filled_in_elsewhere(source):
                return True
            if isinstance(source.node, cst.Call):
                for arg in source.node.args:
                    if isinstance(arg.value, cst.Name) and any(
                        self._filled_in_elsewhere(s) for s in self.flow.sources(arg.value, source.scope)
                    ):
                        return True
        return False

    def is_filled_as_it_runs(self, loader: LoaderInfo) -> bool:
        """The dataset is an object's attribute that the file grows while it runs
        (`DataLoader(self.replay_buffer)`, with `self.trainer.replay_buffer.append(experience)`
        elsewhere): a buffer of this rank's own rollouts or generated samples, not data every rank
        reads the same from storage. Whose attribute it is (`self`, `self.trainer`) is not followed:
        the attribute's name stands for the object, and when that guess is wrong the rule stays
        silent, never the other way round."""
        if loader.dataset is None:
            return False
        held = [loader.dataset]
        scope, arms = loader.site.context.scope, loader.site.context.branches
        if isinstance(loader.dataset, cst.Name):
            held += [source.node for source in self.flow.sources(loader.dataset, scope, arms)]
        return any(isinstance(node, cst.Attribute) and node.attr.value in self._grown_attributes for node in held)

    @cached_property
    def _grown_attributes(self) -> set[str]:
        """Names of attributes the file calls a growing method on (`x.buffer.append(...)`: buffer)."""
        grown = set()
        for site in self.facts.calls:
            if site.name in GROWING_METHODS:
                owner = receiver(site.node.func)
                if isinstance(owner, cst.Attribute):
                    grown.add(owner.attr.value)
        return grown

    def checked_by_assertions(self, loader: LoaderInfo) -> bool:
        """The function that builds the loader, one that calls it, or one it calls asserts on
        results (`assert ...`, `torch.testing.assert_close(...)`, `self.assertEqual(...)`): the
        code is a test."""
        function = self.facts.function_of(loader.site.context.scope)
        if function is None:
            return False
        related = [function]
        related += [self.facts.function_of(site.context.scope) for site, _ in self.facts.call_sites_of(function)]
        for site in self.facts.calls_by_function.get(id(function), []):
            related += [callee for callee, _ in self.facts.functions_called_by(site)]
        return any(other is not None and _asserts(other.node) for other in related)

    def _filled_in_elsewhere(self, source) -> bool:
        function = source.parameter_of
        if function is None:
            return False
        return function.class_name is not None or function.name in self._functions_passed_as_values

    @cached_property
    def _functions_passed_as_values(self) -> set[str]:
        """Names of the file's functions handed to other calls (`pool.submit(fn, ...)`)."""
        return {
            arg.value.value
            for site in self.facts.calls
            for arg in site.node.args
            if isinstance(arg.value, cst.Name) and arg.value.value in self.facts.functions_by_name
        }


def attribute_assignments(facts, attributes: tuple[str, ...]) -> list[tuple]:
    """(binding, target) of each `<something>.<attribute> = value` of the file, for these
    attribute names (`loader.sampler = ...`, `sampler.epoch = ...`)."""
    scopes = [facts.module_scope, *(f.scope for f in facts.functions)]
    scopes += [info.scope for info in facts.classes.values() if info.scope is not None]
    out = []
    for scope in scopes:
        for key, bindings in scope.bindings.items():
            if "." not in key or key.rsplit(".", 1)[-1] not in attributes:
                continue
            for binding in bindings:
                if binding.kind == "assign" and isinstance(binding.node, cst.Assign):
                    out += [
                        (binding, target.target)
                        for target in binding.node.targets
                        if isinstance(target.target, cst.Attribute) and dotted_name(target.target) == key
                    ]
    return out


def builders_hand_whole_datasets(model, loader: LoaderInfo) -> bool:
    """The loader's dataset is a parameter of the constructor of a top-level class (`class
    Trainer: def __init__(self, model, train_set): ... DataLoader(train_set, shuffle=True)`),
    and every call in the project that builds the class passes there a dataset its module makes
    itself (a constructor or a helper's call, `Trainer(net, FolderSet(root))`), not split by rank:
    the caller that `dataset_comes_from_caller` defers to is known, and shards nothing. False when
    a call leaves the parameter to its default, unpacks arguments, hands on a parameter of its own,
    or when the project builds the class nowhere (a library's class: its users are unknown)."""
    from ddplint.analysis.caller_values import modules_naming

    if loader.dataset is None:
        return False
    scope, arms = loader.site.context.scope, loader.site.context.branches
    sources = model.flow.sources(loader.dataset, scope, arms)
    owners = {id(source.parameter_of): source for source in sources if source.parameter_of is not None}
    if len(owners) != 1 or any(source.parameter_of is None for source in sources):
        return False
    init = next(iter(owners.values())).parameter_of
    facts = model.facts
    owner = facts.classes.get(init.class_name or "")
    if init.name != "__init__" or owner is None or owner.scope is None or owner.scope.parent is not facts.module_scope:
        return False
    parameter = _parameter_named_by(init, owner.scope, loader.dataset)
    if parameter is None:
        return False
    modules = modules_naming(model, init.class_name)
    if modules is None:
        return False
    builds = [
        (module, site)
        for module in modules
        for site in module.facts.calls
        if isinstance(site.node.func, (cst.Name, cst.Attribute)) and last_name(site.node.func) == init.class_name
    ]
    return bool(builds) and all(_makes_whole_dataset(module, site, init, parameter) for module, site in builds)


def _parameter_named_by(init, class_scope, dataset: cst.BaseExpression) -> Optional[str]:
    """The constructor parameter the dataset is: the parameter itself (`DataLoader(train_set)`
    in `__init__`), or the attribute set to it once (`self.train_set = train_set`), in
    `__init__` (the class's scope holds its `self.` bindings)."""
    if isinstance(dataset, cst.Name):
        return dataset.value if dataset.value in init.params else None
    key = dotted_name(dataset)
    if key is None or not key.startswith("self."):
        return None
    bindings = class_scope.bindings.get(key, [])
    if len(bindings) != 1 or not isinstance(bindings[0].value, cst.Name):
        return None
    if bindings[0].scope is not init.scope:
        return None  # set by another method: not the constructor's parameter
    name = bindings[0].value.value
    return name if name in init.params else None


def _makes_whole_dataset(module, site: "CallSite", init, parameter: str) -> bool:
    """The call builds the class handing `parameter` a dataset made in the caller's module
    (every value a call), none of them split by rank."""
    if has_star_args(site.node) or double_star_args(site.node):
        return False
    value = init.param_for(site.node, True).get(parameter)
    if value is None:
        return False
    loaders = module.data.loader_model
    sources = module.flow.sources(value, site.context.scope, site.context.branches)
    return bool(sources) and all(
        isinstance(source.node, cst.Call) and source.parameter_of is None and not loaders.split_by_rank(source)
        for source in sources
    )


def constructor_call_for_receiver(site: "CallSite") -> Optional[cst.Call]:
    """`C(...)` for a method call on `C(...)`, or on a name (or `self.` attribute) bound once,
    to `C(...)`: the class whose method runs, for another module's summary of it."""
    func = site.node.func
    if not isinstance(func, cst.Attribute):
        return None
    value: Optional[cst.BaseExpression] = func.value
    key = func.value.value if isinstance(func.value, cst.Name) else self_attribute(func.value)
    if key is not None:
        bindings = site.context.scope.lookup(key)
        if len(bindings) != 1 or bindings[0].kind != "assign":
            return None
        value = bindings[0].value
    return value if isinstance(value, cst.Call) else None


def receiver_class(site: "CallSite") -> Optional[cst.BaseExpression]:
    """The class whose method a call runs, as written in the code: the `C` of a receiver built
    by `C(...)` (constructor_call_for_receiver), or of a receiver that holds a parameter
    annotated `C` (`def connect(self, data: DataInterface): self.data = data`, later
    `self.data.get_loaders()`), for another module's summary of it."""
    built = constructor_call_for_receiver(site)
    if built is not None:
        return built.func
    func = site.node.func
    if not isinstance(func, cst.Attribute):
        return None
    key = func.value.value if isinstance(func.value, cst.Name) else self_attribute(func.value)
    found = site.context.scope.lookup(key) if key is not None else []
    bindings = [b for b in found if not _none_placeholder(b)]  # `self.data = None` in `__init__`
    if len(bindings) != 1:
        return None
    binding = bindings[0]
    if binding.kind == "assign" and isinstance(binding.value, cst.Name):  # `self.data = data`
        held = binding.scope.lookup(binding.value.value)
        binding = held[0] if len(held) == 1 else binding
    if binding.kind != "param" or not isinstance(binding.node, cst.Param) or binding.node.annotation is None:
        return None
    annotation = binding.node.annotation.annotation
    return annotation if isinstance(annotation, (cst.Name, cst.Attribute)) else None


def _none_placeholder(binding: "Binding") -> bool:
    """`self.data = None`, or its place in `self.net, self.data = None, None`: a slot filled later."""
    if binding.kind == "assign":
        return is_none(binding.value)
    if binding.kind == "unpack" and isinstance(binding.value, cst.Tuple) and binding.index is not None:
        elements = binding.value.elements
        return binding.index < len(elements) and is_none(elements[binding.index].value)
    return False


def self_attribute(expr: cst.BaseExpression) -> Optional[str]:
    """"self.trainer" for `self.trainer`, else None."""
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
        return f"self.{expr.attr.value}"
    return None


def _asserts(function: cst.FunctionDef) -> bool:
    for node in walk(function.body):
        if isinstance(node, cst.Assert):
            return True
        if isinstance(node, cst.Call) and (last_name(node.func) or "").lower().startswith("assert"):
            return True
    return False


def _literal_dict_keys(node: Optional[cst.CSTNode]) -> Optional[set[str]]:
    """Keys of `{"a": 1}` or `dict(a=1)`; None for anything whose keys are not all literal."""
    entries = _literal_dict_entries(node)
    return set(entries) if entries is not None else None


def _literal_dict_entries(node: Optional[cst.CSTNode]) -> Optional[dict[str, list[cst.BaseExpression]]]:
    """Key -> values of `{"a": 1}` or `dict(a=1)`; None for anything whose keys are not all literal."""
    entries: dict[str, list[cst.BaseExpression]] = {}
    if isinstance(node, cst.Dict):
        for element in node.elements:
            literal = string_value(element.key) if isinstance(element, cst.DictElement) else None
            if literal is None or not isinstance(element, cst.DictElement):
                return None
            entries.setdefault(literal, []).append(element.value)
        return entries
    if isinstance(node, cst.Call) and last_name(node.func) == "dict":
        for arg in node.args:
            if arg.keyword is None:
                return None
            entries.setdefault(arg.keyword.value, []).append(arg.value)
        return entries
    return None


def _scopes_up(scope):
    while scope is not None:
        yield scope
        scope = scope.parent
