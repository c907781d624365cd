"""DistributedSamplers: which loaders each one reaches, and whether `set_epoch` is called on it
every epoch (DDP002). Without it the sampler seeds its shuffle with the same epoch each pass.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Optional

import libcst as cst

from ddplint.analysis.epochs import EVAL_WORDS
from ddplint.analysis.loaders import LoaderInfo, Loaders, attribute_assignments, constructs
from ddplint.analysis.records import Context, LoopSite
from ddplint.analysis.syntax import (
    argument,
    dotted_name,
    double_star_args,
    has_star_args,
    identifier_words,
    is_false,
    last_name,
    string_value,
    walk,
)
from ddplint.analysis.torch_api import DATALOADER, DISTRIBUTED_SAMPLER, EPOCH_SETTING_FRAMEWORKS, SAMPLER_SLOTS

if TYPE_CHECKING:
    from ddplint.analysis.records import CallSite


@dataclass(eq=False)
class SamplerInfo:
    site: "CallSite"
    shuffles: bool
    loaders: list[LoaderInfo]
    built_in: Optional[str] = None  # as for LoaderInfo: a sampler inside another module's factory
    # What `site` builds when it is not the sampler itself: "loader" (another module's loader
    # factory, the sampler inside) or "kwargs" (its `**kwargs` dict, the sampler an entry).
    inside: Optional[str] = None


@dataclass(eq=False)
class EpochSetting:
    """A place that sets a sampler's epoch: `x.set_epoch(e)` (also through `getattr`), or
    `x.epoch = e`, which is all DistributedSampler.set_epoch does."""

    node: cst.CSTNode  # the call, or the assignment statement
    context: Context
    receiver: cst.BaseExpression  # `x`, with `.sampler` / `.batch_sampler` taken off
    via_loader_attribute: bool  # reached through `<loader>.sampler` / `.batch_sampler`
    epoch: Optional[cst.BaseExpression]  # the value given
    assigned: bool = False  # `x.epoch = e` rather than a call
    written: Optional[cst.BaseExpression] = None  # the receiver as written (`self.sampler`)




def _sampler_entries(node) -> list[cst.BaseExpression]:
    """The sampler values of a literal dict or `dict(...)` call."""
    if isinstance(node, cst.Dict):
        return [
            element.value
            for element in node.elements
            if isinstance(element, cst.DictElement) and string_value(element.key) in SAMPLER_SLOTS
        ]
    if isinstance(node, cst.Call) and last_name(node.func) == "dict":
        return [arg.value for arg in node.args if arg.keyword is not None and arg.keyword.value in SAMPLER_SLOTS]
    return []


class Samplers:
    def __init__(self, facts, flow, loaders: Loaders) -> None:
        self.facts = facts
        self.flow = flow
        self.loaders = loaders

    @cached_property
    def sampler_classes(self) -> set[str]:
        return self.facts.subclasses_of(DISTRIBUTED_SAMPLER)

    @cached_property
    def all(self) -> list[SamplerInfo]:
        out = []
        for site in self.facts.calls_constructing(DISTRIBUTED_SAMPLER, self.sampler_classes):
            shuffle = argument(site.node, "shuffle", 3)
            shuffles = not is_false(shuffle)
            out.append(SamplerInfo(site, shuffles, self._loaders_of(site)))
        for site in self._project_sampler_classes_built:
            # Another module's subclass may order its parameters its own way: keyword only.
            out.append(SamplerInfo(site, not is_false(argument(site.node, "shuffle")), self._loaders_of(site)))
        for loader in self.loaders.from_project:
            # The factory's shuffling DistributedSampler: reached as `loader.sampler` or
            # unpacked from the factory's result (`loader, sampler = build(...)`).
            factory = self.facts.project.loader_factory(self.facts, loader.site)
            if factory.shuffling_sampler and not _shuffle_turned_off(loader.site, factory):
                out.append(SamplerInfo(loader.site, True, [loader], built_in=loader.built_in, inside="loader"))
        out += self._from_project_helpers()
        return out

    @cached_property
    def _project_sampler_classes_built(self) -> list["CallSite"]:
        """Constructions of DistributedSampler subclasses that other project modules define
        (`from torchft import DistributedSampler`)."""
        project = self.facts.project
        if project is None or not self.facts.imports.bindings:
            return []
        return [
            site
            for site in self.facts.calls
            if project.distributed_class(self.facts, site.node.func) in DISTRIBUTED_SAMPLER
        ]

    def _from_project_helpers(self) -> list[SamplerInfo]:
        """Shuffling DistributedSamplers that functions of other project modules build and
        return: the sampler itself (`sampler=get_sampler(ds)`), or as the "sampler" entry of
        DataLoader keyword arguments (`DataLoader(ds, **get_loader_kwargs(ds))`)."""
        project = self.facts.project
        if project is None:
            return []
        out = []
        for site in self.facts.calls:
            where = project.sampler_factory(self.facts, site)
            if where is not None:
                out.append(SamplerInfo(site, True, self._loaders_of(site), built_in=where))
        for loader in self.loaders.all:
            if loader.built_in is not None:
                continue
            for kwargs in double_star_args(loader.site.node):
                for source in self.flow.sources(kwargs, loader.site.context.scope):
                    factory = project.loader_kwargs(self.facts, source.node) if isinstance(source.node, cst.Call) else None
                    site = self._call_sites.get(id(source.node)) if factory is not None else None
                    if site is not None and factory is not None and factory.shuffling_sampler:
                        out.append(SamplerInfo(site, True, [loader], built_in=factory.where, inside="kwargs"))
        return out

    @cached_property
    def _call_sites(self) -> dict[int, "CallSite"]:
        return {id(site.node): site for site in self.facts.calls}

    # -- what a function of this module hands its callers (analysis/project.py) ------------------
    def returned_sampler(self, function) -> Optional[SamplerInfo]:
        """The shuffling DistributedSampler `function` builds and returns (or returns wrapped)."""
        for value, _ in function.returns:
            for sampler in self.all:
                if (
                    sampler.shuffles
                    and sampler.built_in is None
                    and sampler.site.context.scope is function.scope
                    and self.flow.feeds(value, function.scope, sampler.site.node)
                ):
                    return sampler
        return None

    def returned_loader_kwargs(self, function) -> Optional[tuple[Optional[frozenset[str]], Optional[SamplerInfo]]]:
        """(its keys, None when not all are known; the shuffling DistributedSampler of its
        "sampler" entry, if any) for a dict of DataLoader keyword arguments `function` builds
        and returns (`return {"sampler": DistributedSampler(ds), "batch_size": bs}`)."""
        scope = function.scope
        for value, _ in function.returns:
            if not any(_is_dict_display(source.node) for source in self.flow.sources(value, scope)):
                continue
            keys = self.loaders.dict_keys(value, scope)
            entries = self._sampler_entries_of(value, scope)
            sampler = next(
                (
                    sampler
                    for sampler in self.all
                    if sampler.shuffles
                    and sampler.built_in is None
                    and any(self.flow.feeds(entry, where, sampler.site.node) for entry, where in entries)
                ),
                None,
            )
            return (frozenset(keys) if keys is not None else None), sampler
        return None

    def returned_never_seeded(self, sampler: SamplerInfo, loader: LoaderInfo) -> bool:
        """A method returns this loader over a shuffling DistributedSampler of this module, and
        no module of the project ever sets an epoch (nor imports a framework whose loop does):
        however its callers iterate it, every pass has the epoch-0 order. Only for methods: a
        top-level factory's loader is judged in the modules that iterate it (`FactoryLoader`),
        while a method's callers reach it through objects whose class is known only at run time
        (`self.datasets[split].iterator()`), so the fact that ends the search is the project's."""
        if not sampler.shuffles or sampler.built_in is not None or loader.built_in is not None:
            return False
        function = self.facts.function_of(loader.site.context.scope)
        if function is None or function.class_name is None:
            return False
        if set(identifier_words(function.name)) & EVAL_WORDS:
            return False  # `def val_loader(self)`: an evaluation pass, its order does not matter
        if not any(self.flow.feeds(value, function.scope, loader.site.node) for value, _ in function.returns):
            return False
        if self.epoch_settings or not _project_never_sets_an_epoch(self.facts):
            return False
        return not self._epochs_run_by_a_seen_caller(function, loader)

    def _epochs_run_by_a_seen_caller(self, function, loader: LoaderInfo) -> bool:
        """Another module of the project builds the method's class, gets this loader from it
        (`DataModule(cfg).train_loader()`) and runs epochs over it: that loop is where the bug is
        reported (with its fix), so the method's module does not report it a second time."""
        from ddplint.positions import positions_of

        project = self.facts.project
        line = positions_of(self.facts.module, [loader.site.node])[loader.site.node].start.line
        # as the module's summary names it (summaries.line_of: not imported, summaries imports this layer)
        where = f"{os.path.basename(project.path)}:{line}"
        for caller in project.index.models_calling(project.path, function.class_name):
            for built in caller.data.loaders:
                if built.built_in == where and any(i.epoch_loop is not None for i in caller.data.iterations(built)):
                    return True
        return False

    def sets_a_new_epoch_in(self, loop: LoopSite) -> bool:
        """Some sampler's epoch is set to a new value on each turn of `loop` (a generator's)."""
        for setting in self.epoch_settings:
            if not any(enclosing is loop for enclosing in setting.context.loops) or self.gives_the_same_epoch(setting, loop):
                continue
            if not setting.assigned or setting.via_loader_attribute or _plain_variable(setting.receiver):
                return True
        return False

    def _loaders_of(self, sampler_site: "CallSite") -> list[LoaderInfo]:
        target = sampler_site.node
        out = []
        for loader in self.loaders.all:
            call, scope = loader.site.node, loader.site.context.scope
            passed: list[tuple[Optional[cst.BaseExpression], object]] = [
                (argument(call, "sampler", 3), scope),
                (argument(call, "batch_sampler", 4), scope),
            ]
            passed += self._sampler_in_kwargs(call, scope)
            for expr, where in passed:
                if expr is not None and self.flow.feeds(expr, where, target):
                    out.append(loader)
                    break
        return out

    def _sampler_in_kwargs(self, call: cst.Call, scope) -> list[tuple[cst.BaseExpression, object]]:
        """What `DataLoader(ds, **kwargs)` may get as its sampler: the "sampler" /
        "batch_sampler" entries of the dicts `kwargs` comes from (`{"sampler": s}`,
        `dict(sampler=s)`) and items set on them later (`kwargs["sampler"] = s`)."""
        return [entry for kwargs in double_star_args(call) for entry in self._sampler_entries_of(kwargs, scope)]

    def _sampler_entries_of(self, kwargs: cst.BaseExpression, scope) -> list[tuple[cst.BaseExpression, object]]:
        out: list = []
        for source in self.flow.sources(kwargs, scope):
            out += [(value, source.scope) for value in _sampler_entries(source.node)]
        for binding in self.loaders.items_set_on(kwargs, scope):
            if binding.item in SAMPLER_SLOTS and binding.value is not None:
                out.append((binding.value, binding.scope))
        return out

    def unpassed_sampler_for(self, loader: LoaderInfo) -> Optional[SamplerInfo]:
        """A DistributedSampler built over this loader's dataset, in the same function, and
        given to no loader: most likely meant for this one (`sampler = DistributedSampler(ds)`
        then `DataLoader(ds, shuffle=True)`)."""
        if loader.dataset is None or loader.built_in is not None:
            return None
        scope = loader.site.context.scope
        datasets = self._origins(loader.dataset, scope)
        for sampler in self.all:
            if sampler.loaders or sampler.built_in is not None or sampler.site.context.scope is not scope:
                continue
            dataset = argument(sampler.site.node, "dataset", 0)
            if dataset is not None and self._origins(dataset, scope) & datasets:
                return sampler
        return None

    def _origins(self, expr: cst.BaseExpression, scope) -> set:
        """What a dataset expression stands for: the nodes it comes from, or its own text when
        the trail goes cold (`args.train_set` on both sides)."""
        out: set[object] = set()
        for source in self.flow.sources(expr, scope):
            if source.node is not None:
                out.add(id(source.node))
        name = dotted_name(expr)
        if name is not None:
            out.add(name)
        return out

    def set_epoch_reaches(self, sampler: SamplerInfo, epoch_loop: Optional[LoopSite] = None) -> bool:
        """Whether the epoch of this sampler may be set each epoch (or unknowably might). With
        `epoch_loop`, a call made once next to that loop, outside any loop, does not count: it
        sets one epoch, not every epoch; nor does one that gives the same value on every pass
        (`set_epoch(0)`, `set_epoch(global_step)` with a step nothing in the loop advances)."""
        loaders = {id(loader.site.node) for loader in sampler.loaders}
        for setting in self.epoch_settings:
            context = setting.context
            if epoch_loop is not None and not context.loops and context.scope is epoch_loop.context.scope:
                continue
            if epoch_loop is not None and self.gives_the_same_epoch(setting, epoch_loop):
                continue
            if not setting.via_loader_attribute and self._is_plain_loader(setting.receiver, context, loaders):
                continue  # `loader.set_epoch(e)` / `loader.epoch = e` on a torch DataLoader: nothing
            if setting.assigned and not setting.via_loader_attribute and sampler.built_in is not None:
                continue  # `loader.epoch = e` on another module's loader: not its sampler
            for target in _built_with(sampler):
                reach = self.flow.feeds(setting.receiver, context.scope, target, context.branches)
                # An attribute called `epoch` is set on many things (`self.epoch`, `state.epoch`):
                # only one that surely is this sampler counts (`self.sampler.epoch = e`, traced
                # as written); a `set_epoch` call on what cannot be traced does (it is called on
                # samplers, or on what forwards to one).
                if setting.assigned and not reach and setting.written is not setting.receiver:
                    reach = self.flow.feeds(setting.written, context.scope, target, context.branches)
                if reach or (reach is None and not setting.assigned):
                    return True
        if self._handed_to_an_outside_call(sampler, epoch_loop):
            return True
        # A per-epoch helper of another project module that sets the epoch on what it is given.
        for site, passed in self._project_set_epoch_calls:
            context = site.context
            if epoch_loop is not None and not context.loops and context.scope is epoch_loop.context.scope:
                continue
            for target in _built_with(sampler):
                if self.flow.feeds(passed, context.scope, target, context.branches) is not False:
                    return True
        return False

    def fixed_set_epoch(self, sampler: SamplerInfo, epoch_loop: LoopSite) -> Optional[EpochSetting]:
        """A `set_epoch(...)` made in a loop on this sampler (or its loader) with the same value
        on every pass of the epoch loop: a number, or a variable that nothing in it changes."""
        for setting in self.epoch_settings:
            if setting.context.loops and self.gives_the_same_epoch(setting, epoch_loop) and any(
                self.flow.feeds(setting.receiver, setting.context.scope, target, setting.context.branches)
                for target in _built_with(sampler)
            ):
                return setting
        return None

    def ineffective_epoch_setting(self, sampler: SamplerInfo) -> Optional[EpochSetting]:
        """`loader.epoch = e` / `loader.set_epoch(e)` on a torch DataLoader given this sampler:
        the loader has no epoch of its own, so the sampler never hears of it."""
        loaders = {id(loader.site.node) for loader in sampler.loaders}
        for setting in self.epoch_settings:
            if not setting.via_loader_attribute and self._is_plain_loader(setting.receiver, setting.context, loaders):
                if any(
                    self.flow.feeds(setting.receiver, setting.context.scope, loader.site.node) for loader in sampler.loaders
                ):
                    return setting
        return None

    def gives_the_same_epoch(self, setting: EpochSetting, epoch_loop: LoopSite) -> bool:
        """The epoch given is the same on every pass of the epoch loop: a number written there
        (`set_epoch(0)`), or, for a call inside that loop, a plain variable of the same function
        that nothing inside the loops around the call assigns (`step = 0` before the epoch
        loop, `set_epoch(step)` in it, and no `step += 1` in it). A variable given in another
        function (a helper's parameter) may differ from call to call; one declared `global` /
        `nonlocal` anywhere in the file may be advanced by a function called in the loop."""
        epoch = setting.epoch
        if isinstance(epoch, cst.Integer):
            return True
        loops = setting.context.loops
        if not isinstance(epoch, cst.Name) or not any(loop is epoch_loop for loop in loops):
            return False
        name, scope = epoch.value, setting.context.scope
        if not scope.bindings.get(name) or self._declared_shared(name):
            return False  # bound in an enclosing scope or nowhere: another function may change it
        return not _rebinds(loops[0].node, name)

    def _declared_shared(self, name: str) -> bool:
        return re.search(rf"\b(?:global|nonlocal)\b[^\n]*\b{re.escape(name)}\b", self.facts.source) is not None

    def _handed_to_an_outside_call(self, sampler: SamplerInfo, epoch_loop: Optional[LoopSite]) -> bool:
        """The sampler itself goes, once per epoch, into a function this file does not define
        (`train(..., sampler=train_sampler)` of an imported module): setting its epoch is the
        one thing such a function does with a sampler, and the tool cannot look inside. Not so
        for a sampler built inside another module's loader factory (`site` is then the factory
        call, which gives the loader): a function handed a loader iterates it, as it would a
        loader built in this file."""
        if sampler.inside is not None:
            return False
        target = sampler.site.node
        for site in self.facts.calls:
            if epoch_loop is not None and not any(loop is epoch_loop for loop in site.context.loops):
                continue
            if self.facts.functions_called_by(site) or constructs(self.facts, site.node, DATALOADER, self.loaders.loader_classes):
                continue
            if any(q.startswith("torch.") for q in self.facts.qualified_names(site.node.func)):
                continue  # torch's own classes and functions (a BatchSampler wrapping it)
            for arg in site.node.args:
                # the sampler itself, not a loader built around it (`tqdm(loader)`)
                sources = self.flow.sources(arg.value, site.context.scope, site.context.branches)
                if any(source.node is target for source in sources):
                    return True
        return False

    @cached_property
    def _project_set_epoch_calls(self) -> list[tuple["CallSite", cst.BaseExpression]]:
        project = self.facts.project
        if project is None:
            return []
        out = []
        for site in self.facts.calls:
            setter = project.epoch_setter(self.facts, site)
            if setter is not None:
                passed = argument(site.node, setter[0], setter[1])
                if passed is not None:
                    out.append((site, passed))
        return out

    @cached_property
    def epoch_settings(self) -> list[EpochSetting]:
        """Every `x.set_epoch(e)` / `getattr(x, "set_epoch", ...)(e)` call and every `x.epoch = e`
        assignment of the file, in that order."""
        out = []
        for site in self.facts.calls:
            owner = self._set_epoch_receiver(site.node.func, site.context.scope)
            if owner is not None:
                out.append(_setting(site.node, site.context, owner, argument(site.node, "epoch", 0)))
        for binding, target in attribute_assignments(self.facts, ("epoch",)):
            if binding.context is not None:
                out.append(_setting(binding.node, binding.context, target.value, binding.value, assigned=True))
        return out

    @property
    def set_epoch_calls(self) -> list[EpochSetting]:
        """The calls among `epoch_settings` (what other modules' summaries record)."""
        return [setting for setting in self.epoch_settings if not setting.assigned]

    def _set_epoch_receiver(self, func: cst.BaseExpression, scope, follow: bool = True):
        """`x` for `x.set_epoch`, `getattr(x, "set_epoch", ...)`, or a name holding either
        (`set_epoch = getattr(loader.sampler, "set_epoch", None)`)."""
        if isinstance(func, cst.Attribute) and func.attr.value == "set_epoch":
            return func.value
        if (
            isinstance(func, cst.Call)
            and last_name(func.func) == "getattr"
            and len(func.args) >= 2
            and string_value(func.args[1].value) == "set_epoch"
        ):
            return func.args[0].value
        if follow and isinstance(func, cst.Name):
            for binding in scope.lookup(func.value):
                if binding.kind == "assign" and binding.value is not None:
                    owner = self._set_epoch_receiver(binding.value, binding.scope or scope, follow=False)
                    if owner is not None:
                        return owner
        return None

    def _is_plain_loader(self, owner, context, loaders: set[int]) -> bool:
        """The receiver is a torch DataLoader as built, which has no `set_epoch` (a call guarded
        by `hasattr(loader, "set_epoch")` never runs); Accelerate's prepared loaders do have one."""
        sources = self.flow.sources(owner, context.scope, context.branches)
        return bool(sources) and all(
            id(s.node) in loaders and constructs(self.facts, s.node, DATALOADER, set()) for s in sources
        )


def _setting(node, context, owner, epoch, assigned: bool = False) -> EpochSetting:
    written, stripped = owner, False
    while isinstance(owner, cst.Attribute) and owner.attr.value in SAMPLER_SLOTS:
        owner, stripped = owner.value, True
    return EpochSetting(node, context, owner, stripped, epoch, assigned, written)


def _is_dict_display(node) -> bool:
    """`{...}` or `dict(...)`."""
    return isinstance(node, cst.Dict) or (isinstance(node, cst.Call) and last_name(node.func) == "dict")


def _plain_variable(expr: cst.BaseExpression) -> bool:
    """`sampler`, not `self` (`self.epoch = n` is the object's own counter)."""
    return isinstance(expr, cst.Name) and expr.value != "self"


def _rebinds(node: cst.CSTNode, name: str) -> bool:
    """Whether anything under `node` may give variable `name` a new value: an assignment of any
    form, a loop or `with` / `except` target, a walrus, `del`, an import."""
    for sub in walk(node):
        if isinstance(sub, (cst.AssignTarget, cst.For, cst.CompFor, cst.AugAssign, cst.AnnAssign, cst.NamedExpr, cst.Del)):
            target = sub.target
        elif isinstance(sub, cst.AsName):
            target = sub.name
        elif isinstance(sub, cst.ImportAlias):
            if sub.asname is not None:
                target = sub.asname.name
            else:  # `import a.b` binds `a`
                if (dotted_name(sub.name) or "").split(".")[0] == name:
                    return True
                continue
        else:
            continue
        if name in _names_bound_by(target):
            return True
    return False


def _names_bound_by(target: cst.BaseExpression) -> set[str]:
    """`a` -> {a}; `a, (b, *c)` -> {a, b, c}; `x.a` / `x[a]` bind no variable."""
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return {name for element in target.elements for name in _names_bound_by(element.value)}
    if isinstance(target, cst.StarredElement):
        return _names_bound_by(target.value)
    return set()


def _shuffle_turned_off(site: "CallSite", factory) -> bool:
    """The call hands the factory's shuffle parameter False (`img_loader(path, shuffle=False)`),
    or leaves it at a False default: its DistributedSampler keeps one order, as asked."""
    if factory.shuffle_parameter is None or has_star_args(site.node) or double_star_args(site.node):
        return False
    value = argument(site.node, factory.shuffle_parameter, factory.shuffle_position)
    return factory.shuffle_default is False if value is None else is_false(value)


def _built_with(sampler: SamplerInfo) -> tuple[cst.CSTNode, ...]:
    """The sampler's construction and those of the loaders given it: a `set_epoch` call reaches
    the sampler through any of them (`sampler.set_epoch`, `loader.sampler.set_epoch`)."""
    return (sampler.site.node, *(loader.site.node for loader in sampler.loaders))


# A project importing a framework whose loop sets the epoch (torch_api.EPOCH_SETTING_FRAMEWORKS)
# may never write set_epoch itself.
_EPOCH_SETTING_FRAMEWORK_IMPORT = re.compile(
    rb"^[ \t]*(?:from|import)[ \t]+(?:" + b"|".join(p.encode() for p in EPOCH_SETTING_FRAMEWORKS) + rb")\b",
    re.MULTILINE,
)
# What setting an epoch writes: a `set_epoch` call (or its name handed on), or `x.epoch = e`.
_EPOCH_SETTING_TEXT = re.compile(rb"set_epoch|\.epoch[ \t]*=(?!=)")


def _project_never_sets_an_epoch(facts) -> bool:
    """No module of the project (this one included) writes set_epoch or assigns an `.epoch`, nor
    imports a framework whose loop sets it. False without a project: the callers are unseen."""
    project = facts.project
    if project is None:
        return False
    return not project.index.some_module_matches(project.path, _EPOCH_SETTING_TEXT, _EPOCH_SETTING_FRAMEWORK_IMPORT)
