"""Which calls are collectives, which calls reach one, and which forwards talk to the other ranks.

A collective is a call every rank of the group must make (`dist.all_reduce`, `accelerator.gather`,
a DeepSpeed engine's `save_checkpoint`, a distributed checkpoint's `save`); a call reaches one
when it makes it itself or through functions of the file or of the project. A forward through a
`DistributedDataParallel` / FSDP module talks to the other ranks as well. The rank conditions
these questions read (is the collective under a rank guard?) are analysis/rank_guards.py's.
"""

from __future__ import annotations

import dataclasses
from functools import cached_property
from typing import TYPE_CHECKING, Optional

import libcst as cst

from ddplint.analysis.caller_values import modules_naming, passed_values
from ddplint.analysis.rank_guards import RankGuards, flags_truth, literal_flags, normalised
from ddplint.analysis.records import CollectiveReach
from ddplint.analysis.syntax import (
    and_parts,
    dotted_name,
    double_star_args,
    has_star_args,
    identifier_words,
    int_value,
    is_false,
    is_none,
    is_true,
    keyword_arg,
    last_name,
    receiver,
)
from ddplint.analysis.torch_api import (
    ACCELERATOR,
    ACCELERATOR_COLLECTIVES,
    ALWAYS_SYNCING_WRAPPERS,
    BARRIER_COLLECTIVES,
    BROADCAST_COLLECTIVES,
    BUFFER_EVIDENCE,
    CHECKPOINT_COLLECTIVES,
    COLLECTIVES,
    FRAMEWORK_COLLECTIVES,
    LIGHTNING_MODULE,
    LIGHTNING_MODULE_COLLECTIVES,
    LIGHTNING_PACKAGES,
    LIGHTNING_SYNCED_LOGGING,
    METRIC_SYNCING_METHOD,
    METRICS_SYNCING_ON_COMPUTE,
    MODEL_WRAPPING_METHODS,
    MODULE_PARAMETER_METHODS,
    MODULE_RETURNING_METHODS,
    SYNCHRONISING_METHODS,
    TORCH_MODULE,
    WRAPPED_MODEL_CLASSES,
)

if TYPE_CHECKING:
    from ddplint.analysis.facts import ModuleFacts
    from ddplint.analysis.model import ModuleModel
    from ddplint.analysis.records import BranchSite, CallSite, FunctionInfo


# Methods that return the module they are called on (moved or cast): the module is built before them.
_MODULE_MOVES = frozenset({"to", "cuda", "cpu", "float", "half", "bfloat16", "double", "train", "eval", "to_empty"})
# SYNCHRONISING_METHODS turned round: method name -> the builders whose result has it.
_BUILDERS_BY_METHOD = {
    method: frozenset(builder for builder, methods in SYNCHRONISING_METHODS.items() if method in methods)
    for method in frozenset().union(*SYNCHRONISING_METHODS.values())
}


class Collectives(RankGuards):
    """The collectives a file's calls make or reach, and the wrapped model's forwards; a rank
    model (RankGuards) underneath, since whether a collective is coordinated depends on the rank
    conditions around it."""

    # -- collectives ----------------------------------------------------------------------------
    def collective_kind(self, site: "CallSite") -> Optional[str]:
        """"broadcast" / "barrier" for a call that makes the other ranks wait, else None."""
        name = site.name
        if name not in BROADCAST_COLLECTIVES and name not in BARRIER_COLLECTIVES:
            return None
        qualified = self.facts.qualified_names(site.node.func)
        if qualified and not any(q.startswith(("torch.distributed", "accelerate", "deepspeed")) for q in qualified):
            return None  # numpy.broadcast and friends
        return "broadcast" if name in BROADCAST_COLLECTIVES else "barrier"

    def collective_name(self, site: "CallSite") -> Optional[str]:
        """The name of the collective a call is (`all_reduce`, `barrier`, `wait_for_everyone`,
        `gather` of an Accelerator ...), or None. Every rank of the group must make it."""
        # Asked of every call by several questions (the functions that reach a collective, with
        # and without rank conditions, then each branch's calls): answered once per call, the
        # site kept with its answer so that its id stays its own.
        known = self._collective_names.get(id(site))
        if known is None:
            known = self._collective_names[id(site)] = (site, self._collective_name_of(site))
        return known[1]

    @cached_property
    def _collective_names(self) -> dict[int, tuple["CallSite", Optional[str]]]:
        return {}

    def _collective_name_of(self, site: "CallSite") -> Optional[str]:
        name = site.name
        if name in COLLECTIVES:
            qualified = self.facts.qualified_names(site.node.func)
            if any(q.startswith("torch.distributed.") for q in qualified):
                return name
        if name in ACCELERATOR_COLLECTIVES and self._made_on_an_accelerator(site):
            return name
        if self._synchronising_method(site):
            return name
        if name == METRIC_SYNCING_METHOD and self._metric_syncing_on_compute(site):
            metric = receiver(site.node.func)
            return f"{metric is not None and dotted_name(metric) or 'metric'}.{name}"
        if not self.facts.qualified_names(site.node.func).isdisjoint(CHECKPOINT_COLLECTIVES):
            no_dist = keyword_arg(site.node, "no_dist")
            if no_dist is None or not is_true(no_dist.value):
                return f"checkpoint.{name}"
        if self._lightning_module_collective(site):
            return name if name in LIGHTNING_MODULE_COLLECTIVES else f"{name}(..., sync_dist=True)"
        owners = FRAMEWORK_COLLECTIVES.get(name or "")
        if owners and self.facts.imports.imports_any(LIGHTNING_PACKAGES):
            owner = receiver(site.node.func)
            words = set(identifier_words(dotted_name(owner) or "")) if owner is not None else set()
            if words & owners:  # `trainer.save_checkpoint(path)`, `self.trainer.save_checkpoint`
                return name
        return None

    def group_every_rank_joins(self, site: "CallSite") -> bool:
        """The collective's explicit `group=` is one each rank belongs to: the same group
        expression goes to a collective the function (or the module body) makes on every rank,
        outside any rank condition (`barrier(group=gloo)` ... `if rank == 0: barrier(group=gloo)`).
        Each rank's group then holds others, who do not make the guarded call."""
        group = keyword_arg(site.node, "group")
        if group is None:
            return False
        code = self.facts.module.code_for_node
        text = normalised(code(group.value))
        for other in self.facts.calls:
            if other is site or other.context.scope is not site.context.scope:
                continue
            joined = keyword_arg(other.node, "group")
            if joined is None or normalised(code(joined.value)) != text or self.collective_name(other) is None:
                continue
            if not self.made_under_rank_condition(other) and not self.after_other_ranks_left(other.context):
                return True
        return False

    def _synchronising_method(self, site: "CallSite") -> bool:
        """`engine.save_checkpoint(dir)` on what `deepspeed.initialize(...)` returned,
        `model.state_dict()` on an FSDP module: the receiver is followed to what built it."""
        builders = _BUILDERS_BY_METHOD.get(site.name or "")
        return builders is not None and self._receiver_built_by(site, builders)

    def _metric_syncing_on_compute(self, site: "CallSite") -> bool:
        """`acc.compute()` on what `torchmetrics.Accuracy(...)` (moved with `.to(device)`) built:
        the metric gathers every rank's state before it computes, unless built not to."""
        owner = receiver(site.node.func)
        if owner is None:
            return False
        built = self._constructions(owner, site, depth=0)
        return bool(built) and all(
            any(q.startswith(METRICS_SYNCING_ON_COMPUTE) for q in self.facts.qualified_names(call.func))
            and not _builds_without_sync(call)
            for call in built
        )

    def _receiver_built_by(self, site: "CallSite", builders: frozenset) -> bool:
        """The object a method is called on comes from a call of one of `builders` (qualified
        names), followed through the file's assignments."""
        owner = receiver(site.node.func)
        return owner is not None and any(
            isinstance(source.node, cst.Call) and not self.facts.qualified_names(source.node.func).isdisjoint(builders)
            for source in self.flow.sources(owner, site.context.scope, site.context.branches)
        )

    # -- the DDP wrapper's construction ---------------------------------------------------------
    def _call_all_ranks_make(self, site: "CallSite") -> Optional[str]:
        """A collective, or the construction of a DDP wrapper: every rank must make both, yet
        only the first moves values between the ranks (a metric is not reduced by building a
        wrapper, analysis/metrics.py), so only the first is a `collective_name`."""
        name = self.collective_name(site)
        if name is None and self._builds_wrapper(site):
            name = f"{site.name}(model)" if site.name in MODEL_WRAPPING_METHODS else site.name
        return name

    def _builds_wrapper(self, site: "CallSite") -> bool:
        """`DistributedDataParallel(model)`, `accelerator.prepare(model, opt)`, `fabric.setup(model)`:
        the call wraps a model for DDP, whose constructor synchronises every rank."""
        if site.name in MODEL_WRAPPING_METHODS:
            return self.wraps_a_model(site)
        return not self.facts.qualified_names(site.node.func).isdisjoint(WRAPPED_MODEL_CLASSES - ALWAYS_SYNCING_WRAPPERS)

    def wraps_a_model(self, site: "CallSite") -> bool:
        """A framework call (MODEL_WRAPPING_METHODS) on its framework object that is handed a
        model: what it returns for that model is a DDP-wrapped one. `accelerator.prepare(loader)`
        wraps no model."""
        builders = MODEL_WRAPPING_METHODS.get(site.name or "")
        if builders is None or not self._made_on_a_framework(site, builders):
            return False
        return any(not arg.star and self._holds_a_module(arg.value, site) for arg in site.node.args)

    def _made_on_a_framework(self, site: "CallSite", builders: frozenset) -> bool:
        """The receiver holds an object one of `builders` built, or is named for that class
        (`self.accelerator`, `self.fabric`) where its value cannot be followed."""
        owner = receiver(site.node.func)
        if owner is None:
            return False
        words = {builder.rsplit(".", 1)[-1].lower() for builder in builders}
        return bool(words & set(identifier_words(dotted_name(owner) or ""))) or self._receiver_built_by(site, builders)

    def _holds_a_module(self, value: cst.BaseExpression, site: "CallSite") -> bool:
        """The value is a torch module: built by a `torch.nn` class or an `nn.Module` subclass of
        the file, returned by `unwrap_model` / `from_pretrained`, or its `.parameters()` are
        asked for (an optimizer built over them)."""
        if dotted_name(value) in self._holders_of_parameters:
            return True
        for call in self._constructions(value, site, depth=0):
            if last_name(call.func) in MODULE_RETURNING_METHODS or dotted_name(call.func) in self._module_classes:
                return True
            if any(q.startswith("torch.nn.") and q[len("torch.nn."):][:1].isupper() for q in self.facts.qualified_names(call.func)):
                return True
        return False

    @cached_property
    def _holders_of_parameters(self) -> frozenset:
        """`model` / `self.net` for each `model.parameters()` of the file."""
        out = set()
        for site in self.facts.calls:
            if site.name in MODULE_PARAMETER_METHODS:
                owner = receiver(site.node.func)
                name = dotted_name(owner) if owner is not None else None
                if name:
                    out.add(name)
        return frozenset(out)

    @cached_property
    def _module_classes(self) -> set[str]:
        return self.facts.subclasses_of(TORCH_MODULE)

    def _lightning_module_collective(self, site: "CallSite") -> bool:
        """`self.all_gather(x)`, `self.log(..., sync_dist=True)` in a LightningModule of this file."""
        func = site.node.func
        if not isinstance(func, cst.Attribute) or not isinstance(func.value, cst.Name) or func.value.value != "self":
            return False
        if site.name not in LIGHTNING_MODULE_COLLECTIVES:
            sync = keyword_arg(site.node, "sync_dist")
            if site.name not in LIGHTNING_SYNCED_LOGGING or sync is None or not is_true(sync.value):
                return False
        owner = site.context.scope.class_scope
        return owner is not None and owner.name in self._lightning_modules

    @cached_property
    def _lightning_modules(self) -> set[str]:
        return self.facts.subclasses_of(LIGHTNING_MODULE)

    def _made_on_an_accelerator(self, site: "CallSite") -> bool:
        """`accelerator.gather(x)`, `acc.gather(x)` with `acc = Accelerator()`: the receiver holds
        an Accelerator, or is named for one where its value cannot be followed
        (`self.accelerator` set in another class)."""
        if any(q.startswith("accelerate.") for q in self.facts.qualified_names(site.node.func)):
            return True
        owner = receiver(site.node.func)
        if owner is not None and "accelerator" in identifier_words(dotted_name(owner) or ""):
            return True
        return self._receiver_built_by(site, ACCELERATOR)

    def collective_reached(self, site: "CallSite", on_one_rank: bool = False) -> Optional[CollectiveReach]:
        """A collective the call makes, itself or inside a function of this file it calls
        (`evaluate(model)` whose body all-reduces), or of another project module.

        Inside the callees, a collective under a condition the call site has already decided the
        other way (`if pipe: self._update() else: ... self._update()` where `_update` all-reduces
        only `if pipe:`) is not reached. `on_one_rank`: the call is made by one rank only, so a
        collective the callee makes under its own single-rank guard (`if rank == 0: barrier()`)
        is reached too, by that rank alone."""
        direct = self._call_all_ranks_make(site)
        if direct is not None:
            return CollectiveReach(direct, subgroup=keyword_arg(site.node, "group") is not None)
        decided = None
        false_here = self._false_on_one_rank(site) if on_one_rank else frozenset()
        for function, bound in self._callees(site):
            if function not in (self._any_collective_functions if on_one_rank else self._collective_functions):
                continue
            decided = self._decided_conditions(site) if decided is None else decided
            arguments = function.param_for(site.node, bound)
            flags = literal_flags(arguments) | {(f"flag:{name}", False) for name, value in arguments.items() if id(value) in false_here}
            inner = self._first_collective_in(function, set(), decided | flags, on_one_rank)
            if inner is not None:
                return inner.through(function.name)
        if self.facts.project is not None:  # a helper of another project module (`reduce_mean`)
            return self.facts.project.collective(self.facts, site, false_here)
        return None

    def _false_on_one_rank(self, site: "CallSite") -> frozenset[int]:
        """Ids of the call's arguments that are false whenever only some ranks make the call: a
        part of an enclosing `A or rank == 0` that does not depend on the rank, passed as it is
        (`if load_on_all_ranks or rank == 0: load(path, load_on_all_ranks)`): were it true, every
        rank would be there. A helper making its collective only when that flag is true
        (`if load_on_all_ranks: barrier()`) then makes none on the one-rank path."""
        code = self.facts.module.code_for_node
        false_texts: set[str] = set()
        for branch, in_body in site.context.branches:
            test = branch.test
            if not in_body or not isinstance(test, cst.BooleanOperation) or not isinstance(test.operator, cst.Or):
                continue
            parts = _disjuncts(test)
            rank_dependent = [self.depends_on_rank(part, site.context.scope) for part in parts]
            if any(rank_dependent) and not all(rank_dependent):
                false_texts.update(normalised(code(part)) for part, ranked in zip(parts, rank_dependent) if not ranked)
        if not false_texts:
            return frozenset()
        return frozenset(id(arg.value) for arg in site.node.args if not arg.star and normalised(code(arg.value)) in false_texts)

    def collective_inside(self, function) -> Optional[CollectiveReach]:
        """The first collective a function of this file makes on every call (not under a rank
        condition of its own), directly or through the file's other functions."""
        if function not in self._collective_functions:
            return None
        reach = self._first_collective_in(function, set(), frozenset(), False)
        if reach is None:
            return None
        return dataclasses.replace(reach, skipped_by=self._flags_skipping(function))

    def _flags_skipping(self, function) -> frozenset:
        """(parameter, position, value) for each literal True / False that, passed for one of the
        function's parameters, leaves every collective of the call out (`if sync: barrier()`)."""
        out = set()
        for position, parameter in enumerate(function.params):
            for value in (True, False):
                flags = frozenset({(f"flag:{parameter}", value)})
                if self._first_collective_in(function, set(), flags, False) is None:
                    out.add((parameter, position, value))
        return frozenset(out)

    def _first_collective_in(self, function, seen: set, decided: frozenset, on_one_rank: bool) -> Optional[CollectiveReach]:
        if id(function) in seen:
            return None
        seen.add(id(function))
        for call in self.facts.calls_by_function.get(id(function), []):
            if self._excluded_by(call, decided):
                continue
            name = self._call_all_ranks_make(call)
            if name is not None and (not self.made_under_rank_condition(call) or on_one_rank and self._single_rank_only(call)):
                return CollectiveReach(name, subgroup=keyword_arg(call.node, "group") is not None)
            imported = self._project_collective(call)
            if imported is not None and (not self.made_under_rank_condition(call) or on_one_rank and self._single_rank_only(call)):
                return imported  # `validate()` -> the engine module's `evaluate()` -> all_reduce
            for callee, bound in self._callees(call):
                conditions = frozenset(c for c in decided if not c[0].startswith("flag:"))
                conditions |= literal_flags(callee.param_for(call.node, bound))
                inner = self._first_collective_in(callee, seen, conditions, on_one_rank)
                if inner is not None:
                    return inner
        return None

    def _callees(self, site: "CallSite") -> list:
        """The file's functions a call may reach (`facts.functions_called_by`), and for a method
        call on an object a class keeps on `self` (`self.meter = Meter()` in `__init__`, then
        `self.meter.log(x)`) the methods of that class of the file, as for a local object."""
        found = self.facts.functions_called_by(site)
        func = site.node.func
        if found or not isinstance(func, cst.Attribute) or not isinstance(func.value, cst.Attribute):
            return found
        held = dotted_name(func.value)
        if held is None or not held.startswith("self.") or held.count(".") != 1:
            return found
        return [
            (method, True)
            for cls in self.facts.instance_classes(held, site.context.scope)
            for method in self.facts.methods_of(cls, func.attr.value)
        ]

    def _decided_conditions(self, site: "CallSite") -> frozenset:
        """The conditions around a call, as (source text, arm taken)."""
        code = self.facts.module.code_for_node
        return frozenset((normalised(code(branch.test)), arm) for branch, arm in site.context.branches)

    def _excluded_by(self, call: "CallSite", decided: frozenset) -> bool:
        """The call sits in an arm the caller's conditions rule out: the same condition decided
        the other way, or a test that the literal flags passed in make take the other arm
        (`if rank == 0 and not evaluate:` in a helper called with `evaluate=True`)."""
        if not decided:
            return False
        code = self.facts.module.code_for_node
        flags = {name: value for name, value in decided if name.startswith("flag:")}
        for branch, arm in call.context.branches:
            if (normalised(code(branch.test)), not arm) in decided:
                return True
            if flags and flags_truth(branch.test, flags) is (not arm):
                return True
        return False

    def _single_rank_only(self, call: "CallSite") -> bool:
        """Under a rank condition that is a single-rank guard (`if rank == 0:`), in its rank arm."""
        return self.runs_on_one_rank_only(call.context)

    def _makes_collective(self, site: "CallSite") -> bool:
        """The call is a collective, or calls a function of another project module that makes
        one (`evaluate` imported from the package's engine module)."""
        return self._call_all_ranks_make(site) is not None or self._project_collective(site) is not None

    def _project_collective(self, site: "CallSite") -> Optional[CollectiveReach]:
        """The collective a function of another project module makes when this call calls it."""
        if self.facts.project is None:
            return None
        key = id(site.node)
        if key not in self._imported_reach:
            self._imported_reach[key] = self.facts.project.collective(self.facts, site)
        return self._imported_reach[key]

    @cached_property
    def _imported_reach(self) -> dict[int, Optional[CollectiveReach]]:
        return {}

    @cached_property
    def _any_collective_functions(self) -> set:
        return self.facts.functions_reaching(self._makes_collective)

    @cached_property
    def _collective_functions(self) -> set:
        # A collective the callee itself guards by rank (`if local_rank not in (-1, 0):
        # barrier()`) is already coordinated there; it does not make the call a collective.
        return self.facts.functions_reaching(
            lambda site: self._makes_collective(site) and not self.made_under_rank_condition(site)
        )

    # -- the DDP-wrapped model ------------------------------------------------------------------
    def is_wrapped_model_forward(self, site: "CallSite") -> bool:
        """`model(x)` where `model` holds a `DistributedDataParallel(...)` / FSDP module: its
        forward synchronises buffers (and FSDP gathers parameters) with the other ranks.
        `model.module(x)` is the plain module and does not."""
        return self._holds_syncing_wrapper(site.node.func, site)

    def forward_reads_the_wrapper_itself(self, site: "CallSite") -> bool:
        """`self.G(z)` / `model(x)` of a wrapped model the function reads from `self`, a global or
        its own assignments, not from one of its parameters (`def test(model): model(x)` runs
        whatever its caller hands it: the fix is there)."""
        func = site.node.func
        if not isinstance(func, (cst.Name, cst.Attribute)) or not self._syncing_wrappers:
            return False
        return any(
            isinstance(source.node, cst.Call) and id(source.node) in self._syncing_wrappers and not source.via
            for source in self.flow.sources(func, site.context.scope, site.context.branches)
        )

    def _holds_syncing_wrapper(self, expr: cst.BaseExpression, site: "CallSite") -> bool:
        """`expr`, at the call `site`, holds a DDP / FSDP module whose forward talks to the others."""
        if not isinstance(expr, (cst.Name, cst.Attribute)) or not self._syncing_wrappers:
            return False
        for source in self.flow.sources(expr, site.context.scope, site.context.branches):
            if isinstance(source.node, cst.Call) and id(source.node) in self._syncing_wrappers:
                return True
        return False

    def hands_wrapped_model_to_project(self, site: "CallSite") -> bool:
        """`engine.evaluate(model, loader)` with `model` the wrapped model, where `evaluate` (a
        function of another project module) runs forward on that parameter (`model(x)`): the
        forward, and its collectives, happen there. `model.module` is not the wrapper."""
        project = self.facts.project
        if project is None or not self._syncing_wrappers:
            return False
        forwarded = project.forwarded_parameters(self.facts, site)
        if not forwarded:
            return False
        positions = set(forwarded.values())
        position = 0
        for arg in site.node.args:
            if arg.star == "*":
                break  # the positions after `*args` are unknown
            if arg.star:
                continue  # `**kwargs`
            if arg.keyword is not None:
                if arg.keyword.value in forwarded and self._holds_syncing_wrapper(arg.value, site):
                    return True
                continue
            if position in positions and self._holds_syncing_wrapper(arg.value, site):
                return True
            position += 1
        return False

    @cached_property
    def _syncing_wrappers(self) -> frozenset:
        """The `DistributedDataParallel(...)` / FSDP constructions whose forward talks to the other
        ranks. FSDP always all-gathers parameters. DDP broadcasts buffers, so it counts only when
        the model may have some (the file mentions BatchNorm, `register_buffer`, or builds
        torchvision / timm models) and `broadcast_buffers=False` is not passed: a buffer-less
        model (a GPT with flash attention) runs a rank-0 forward without any collective."""
        out = set()
        for site in self.facts.calls_named(*WRAPPED_MODEL_CLASSES):
            names = self.facts.qualified_names(site.node.func)
            if names & ALWAYS_SYNCING_WRAPPERS:
                out.add(id(site.node))
                continue
            broadcast = next((a for a in site.node.args if a.keyword and a.keyword.value == "broadcast_buffers"), None)
            if broadcast is not None and isinstance(broadcast.value, cst.Name) and broadcast.value.value == "False":
                continue
            if self._model_may_have_buffers or site.node.args and self._built_from_buffered_project_module(site.node.args[0].value, site):
                out.add(id(site.node))
        # `model, opt = accelerator.prepare(model, opt)`: the framework builds the DDP wrapper
        # (buffers broadcast by default); the call is the source of what it returns.
        for site in self.facts.calls:
            if site.name in MODEL_WRAPPING_METHODS and self.wraps_a_model(site):
                if self._model_may_have_buffers or any(
                    not arg.star and self._built_from_buffered_project_module(arg.value, site) for arg in site.node.args
                ):
                    out.add(id(site.node))
        return frozenset(out)

    def _built_from_buffered_project_module(self, value: cst.BaseExpression, wrapper: "CallSite") -> bool:
        """The wrapped module is built by a class (or factory) of another project module that
        declares buffers where they always exist (`DDP(Net().cuda())`, `Net` in model.py calling
        `register_buffer` outside any `if`, or building a BatchNorm layer)."""
        project = self.facts.project
        if project is None:
            return False
        for call in self._constructions(value, wrapper, depth=0):
            for qualified in self.facts.qualified_names(call.func):
                resolved = project.index.resolve(project.path, qualified)
                if resolved is not None and _declares_buffers(project.index.module_facts(resolved[0])):
                    return True
        return False

    def _constructions(self, value: cst.BaseExpression, wrapper: "CallSite", depth: int) -> list[cst.Call]:
        """The calls that build `value`, past `.to(device)` / `.cuda()` and the file's assignments."""
        if depth > 4:
            return []
        if isinstance(value, cst.Call):
            func = value.func
            if isinstance(func, cst.Attribute) and func.attr.value in _MODULE_MOVES:
                return self._constructions(func.value, wrapper, depth + 1)
            return [value]
        if isinstance(value, (cst.Name, cst.Attribute)):
            out: list[cst.Call] = []
            for source in self.flow.sources(value, wrapper.context.scope, wrapper.context.branches):
                if isinstance(source.node, cst.BaseExpression) and source.node is not value:
                    out.extend(self._constructions(source.node, wrapper, depth + 1))
            return out
        return []

    @cached_property
    def _model_may_have_buffers(self) -> bool:
        text = self.facts.source
        if any(word in text for word in BUFFER_EVIDENCE):
            return True
        return self.facts.imports.imports_any(("torchvision.models", "timm"))

    def wrapped_forward_reached(self, site: "CallSite") -> bool:
        """A forward through the wrapped model, made by the call or inside a file function it calls."""
        if self._runs_wrapped_forward(site):
            return True
        return any(f in self._forward_functions for f, _ in self.facts.functions_called_by(site))

    def _runs_wrapped_forward(self, site: "CallSite") -> bool:
        """The call itself runs the wrapped model forward, here or in a project function it hands
        the model to."""
        return self.is_wrapped_model_forward(site) or self.hands_wrapped_model_to_project(site)

    @cached_property
    def _forward_functions(self):
        if not self._syncing_wrappers:
            return set()
        return self.facts.reaching_test(self._runs_wrapped_forward)  # asked about a few callees


def _declares_buffers(module: Optional["ModuleFacts"]) -> bool:
    """A project module that always gives the modules it builds buffers: it calls
    `register_buffer` outside any condition of its function, or builds a BatchNorm layer or a
    torchvision / timm model. A buffer registered only under `if not self.flash:` may never
    exist; a module that cannot be read declares none."""
    if module is None:
        return False
    if module.imports.imports_any(("torchvision.models", "timm")):
        return True
    return any(
        site.name == "register_buffer" and not site.context.branches or "BatchNorm" in (site.name or "")
        for site in module.calls
    )


def _disjuncts(test: cst.BaseExpression) -> list[cst.BaseExpression]:
    """`a or b or c` -> [a, b, c] (parentheses aside)."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or):
        return _disjuncts(test.left) + _disjuncts(test.right)
    return [test]


def _builds_without_sync(call: cst.Call) -> bool:
    """`Accuracy(..., sync_on_compute=False)`: the metric computes on this rank's state alone."""
    sync = keyword_arg(call, "sync_on_compute")
    return sync is not None and not is_true(sync.value)


def rank_zero_flag_arm(model: "ModuleModel", branch: "BranchSite") -> Optional[bool]:
    """True when the body of `if flag:` (or `if flag and ...:`) runs on rank 0 alone because of
    what the callers hand the parameter `flag`: `def validate(model, loader, verbose=False): ...
    if verbose: dist.all_reduce(t)`, every call in the project passing `verbose=dist.get_rank()
    == 0` (or leaving the False default). None otherwise. Asked only of a branch whose body
    reaches a collective: finding the callers reads the project's modules."""
    node = branch.node
    if not isinstance(node, cst.If):
        return None
    facts = model.facts
    function = facts.function_of(branch.context.scope)
    if function is None:
        return None
    parts = and_parts(node.test)
    flags = [part.value for part in parts if isinstance(part, cst.Name) and part.value in function.params]
    kept = [part for part in parts if isinstance(part, cst.Attribute) and function.class_name is not None and dotted_name(part)]
    if not (flags or kept) or not any(model.ranks.collective_reached(site) for site in facts.calls_in_arm(branch, True)):
        return None
    if any(_rank_zero_flag(model, function, flag) for flag in flags):
        return True
    return True if any(_rank_zero_flag_kept(model, function, part) for part in kept) else None


def _rank_zero_flag_kept(model: "ModuleModel", method: "FunctionInfo", attribute: cst.Attribute) -> bool:
    """`self.show` that only `__init__` assigns, from its parameter `show`, with every
    construction of the class in the project passing a rank-0 test for it
    (`Trainer(net, show=dist.get_rank() == 0)`)."""
    facts = model.facts
    bindings = method.scope.lookup(dotted_name(attribute) or "")
    if not bindings or not all(b.kind == "assign" and isinstance(b.value, cst.Name) for b in bindings):
        return False
    init = facts.function_of(bindings[0].scope)
    if init is None or init.name != "__init__" or init.class_name != method.class_name:
        return False
    names = {b.value.value for b in bindings if isinstance(b.value, cst.Name)}
    if len(names) != 1 or any(b.scope is not init.scope for b in bindings):
        return False
    name = names.pop()
    if name not in init.params or any(b.kind != "param" for b in init.scope.lookup(name)):
        return False
    if _ruled_out(init, name, _constructions([model], init, name)):
        return False  # a construction in this file already hands it something else
    return _all_rank_zero_or_false(init, name, _values_passed_to_class(model, init, name))


def _values_passed_to_class(model: "ModuleModel", init: "FunctionInfo", name: str) -> Optional[list]:
    """What each construction of the class (`Trainer(...)`, found by the class's name in the
    project, as caller_values finds a function's calls) hands `__init__`'s parameter `name`."""
    modules = modules_naming(model, init.class_name or "") if model.facts.project is not None else [model]
    return _constructions(modules, init, name) if modules is not None else None


def _constructions(modules: list["ModuleModel"], init: "FunctionInfo", name: str) -> Optional[list]:
    """(module, call, the value it hands `__init__`'s `name`) for each construction of the class
    in `modules`; None where one passes *args / **kwargs."""
    class_name = init.class_name or ""
    found = []
    for module in modules:
        for site in module.facts.calls:
            if last_name(site.node.func) != class_name:
                continue
            if has_star_args(site.node) or double_star_args(site.node):
                return None
            found.append((module, site, init.param_for(site.node, True).get(name)))
    return found


def _rank_zero_flag(model: "ModuleModel", function: "FunctionInfo", name: str) -> bool:
    """The parameter, never rebound in its function, is a rank-0 test wherever it is given: each
    caller passes a rank-0 guard of its own scope, or False / None, or leaves a false default;
    at least one passes a guard."""
    if any(binding.kind != "param" for binding in function.scope.lookup(name)):
        return False
    if _ruled_out(function, name, _values_passed_here(model, function, name)):
        return False  # a caller in this file already hands it something else
    return _all_rank_zero_or_false(function, name, _values_passed(model, function, name))


def _ruled_out(function: "FunctionInfo", name: str, values: Optional[list]) -> bool:
    """Some of these callers hand the parameter a value that is neither a rank-0 test nor false:
    then no caller elsewhere can make it one, and the project's modules need not be read (in a
    large package most flags are forwarded or set to True by the callers beside them)."""
    return values is None or any(not _all_rank_zero_or_false(function, name, [value], needs_a_guard=False) for value in values)


def _all_rank_zero_or_false(function: "FunctionInfo", name: str, values: Optional[list], needs_a_guard: bool = True) -> bool:
    """Each (module, call, value) passes a rank-0 guard of the caller's scope, or False / None,
    or leaves a false default of `function`'s parameter `name`; at least one passes a guard
    (unless not `needs_a_guard`)."""
    if not values:
        return not needs_a_guard and values is not None
    guarded = False
    for module, site, value in values:
        if value is None:
            if not _false_default(function, name):
                return False
        elif not (is_false(value) or is_none(value)):
            if not module.ranks.is_rank_zero_guard(value, site.context.scope):
                return False
            guarded = True
    return guarded or not needs_a_guard


def _values_passed(model: "ModuleModel", function: "FunctionInfo", name: str) -> Optional[list]:
    """What each call hands the parameter (caller_values.passed_values): in the whole project, or
    in this file when it belongs to none (a file checked alone)."""
    if model.facts.project is not None:
        return passed_values(model, function, name)
    return _values_passed_here(model, function, name)


def _values_passed_here(model: "ModuleModel", function: "FunctionInfo", name: str) -> list:
    return [(model, site, function.param_for(site.node, bound).get(name)) for site, bound in model.facts.call_sites_of(function)]


def _false_default(function: "FunctionInfo", name: str) -> bool:
    params = function.node.params
    for param in (*params.posonly_params, *params.params, *params.kwonly_params):
        if param.name.value == name:
            default = param.default
            return default is not None and (is_false(default) or is_none(default) or int_value(default) == 0)
    return False
