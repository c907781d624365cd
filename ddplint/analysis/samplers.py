"""DistributedSamplers: which loaders each one reaches, and whether `set_epoch` is called on it
every epoch (DDP002). Without it the sampler seeds its shuffle with the same epoch each pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Optional

import libcst as cst

from ddplint.analysis.loaders import LoaderInfo, Loaders, constructs
from ddplint.analysis.records import LoopSite
from ddplint.analysis.syntax import argument, dotted_name, double_star_args, is_false, last_name, string_value
from ddplint.analysis.torch_api import DATALOADER, DISTRIBUTED_SAMPLER

if TYPE_CHECKING:
    from ddplint.analysis.records import CallSite


@dataclass(eq=False)
class SamplerInfo:
    site: "CallSite"
    shuffles: bool
    loaders: list[LoaderInfo]
    built_in: Optional[str] = None  # as for LoaderInfo: a sampler inside another module's factory


_SAMPLER_KEYS = ("sampler", "batch_sampler")


def _sampler_entries(node) -> list[cst.BaseExpression]:
    """The sampler values of a literal dict or `dict(...)` call."""
    if isinstance(node, cst.Dict):
        return [
            element.value
            for element in node.elements
            if isinstance(element, cst.DictElement) and string_value(element.key) in _SAMPLER_KEYS
        ]
    if isinstance(node, cst.Call) and last_name(node.func) == "dict":
        return [arg.value for arg in node.args if arg.keyword is not None and arg.keyword.value in _SAMPLER_KEYS]
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
        for loader in self.loaders.from_project:
            # The factory's shuffling DistributedSampler: reached as `loader.sampler` or
            # unpacked from the factory's result (`loader, sampler = build(...)`).
            if self.facts.project.loader_factory(self.facts, loader.site).shuffling_sampler:
                out.append(SamplerInfo(loader.site, True, [loader], built_in=loader.built_in))
        return out

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
        out: list = []
        for kwargs in double_star_args(call):
            for source in self.flow.sources(kwargs, scope):
                out += [(value, source.scope) for value in _sampler_entries(source.node)]
            for binding in self.loaders.items_set_on(kwargs, scope):
                if binding.item in _SAMPLER_KEYS and binding.value is not None:
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
        """Whether some `set_epoch(...)` call may be made on this sampler each epoch (or
        unknowably might). With `epoch_loop`, a call made once next to that loop, outside any
        loop, does not count: it sets one epoch, not every epoch."""
        loaders = {id(loader.site.node) for loader in sampler.loaders}
        for site, owner, via_loader_attribute in self.set_epoch_calls:
            context = site.context
            if epoch_loop is not None and not context.loops and context.scope is epoch_loop.context.scope:
                continue
            if epoch_loop is not None and sets_a_fixed_epoch(site):
                continue  # `set_epoch(0)` every epoch: the same seed, so the same order
            if not via_loader_attribute and self._is_plain_loader(owner, context, loaders):
                continue
            for target in _built_with(sampler):
                reach = self.flow.feeds(owner, context.scope, target, context.branches)
                if reach is None or reach:
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

    def fixed_set_epoch(self, sampler: SamplerInfo) -> Optional["CallSite"]:
        """A `set_epoch(<number>)` call made in a loop on this sampler (or its loader)."""
        for site, owner, _ in self.set_epoch_calls:
            if site.context.loops and sets_a_fixed_epoch(site) and any(
                self.flow.feeds(owner, site.context.scope, target, site.context.branches) for target in _built_with(sampler)
            ):
                return site
        return None

    def _handed_to_an_outside_call(self, sampler: SamplerInfo, epoch_loop: Optional[LoopSite]) -> bool:
        """The sampler itself goes, once per epoch, into a function this file does not define
        (`train(..., sampler=train_sampler)` of an imported module): setting its epoch is the
        one thing such a function does with a sampler, and the tool cannot look inside."""
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
    def set_epoch_calls(self) -> list[tuple["CallSite", cst.BaseExpression, bool]]:
        """(call, receiver, reached through `.sampler` / `.batch_sampler`) for every
        `x.set_epoch(e)` and `getattr(x, "set_epoch", ...)(e)`."""
        out = []
        for site in self.facts.calls:
            owner = self._set_epoch_receiver(site.node.func, site.context.scope)
            if owner is None:
                continue
            stripped = False
            while isinstance(owner, cst.Attribute) and owner.attr.value in ("sampler", "batch_sampler"):
                owner, stripped = owner.value, True
            out.append((site, owner, stripped))
        return out

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


def sets_a_fixed_epoch(site: "CallSite") -> bool:
    """`sampler.set_epoch(0)`: a number written in the call, the same every time it runs."""
    epoch = argument(site.node, "epoch", 0)
    return isinstance(epoch, cst.Integer)


def _built_with(sampler: SamplerInfo) -> tuple[cst.CSTNode, ...]:
    """The sampler's construction and those of the loaders given it: a `set_epoch` call reaches
    the sampler through any of them (`sampler.set_epoch`, `loader.sampler.set_epoch`)."""
    return (sampler.site.node, *(loader.site.node for loader in sampler.loaders))
