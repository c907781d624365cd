"""Where tensors and modules are placed: which placements name GPU 0 outright, which name "the
current CUDA device" (GPU 0 unless something sets it per rank), and whether something does.

DDP005 reads this; `verify` could check the same placements at run time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, AbstractSet, Optional

import libcst as cst

from ddplint.analysis.reaching import order
from ddplint.analysis.syntax import (
    alternatives,
    argument,
    dotted_name,
    int_value,
    keyword_arg,
    last_name,
    receiver,
    string_value,
    walk,
)
from ddplint.analysis.torch_api import (
    CURRENT_DEVICE_ALWAYS,
    CURRENT_DEVICE_CALLS,
    DATALOADER,
    DEVICE_SETTING_CALLS,
    DEVICE_SETTING_FRAMEWORKS,
    PLACEMENT_METHODS,
    PROCESS_GROUP_STARTERS,
    SET_DEFAULT_DEVICE,
    SET_DEVICE,
    TORCH_DEVICE,
)
from ddplint.diagnostics import one_line

if TYPE_CHECKING:
    from ddplint.analysis.distributed import RankModel
    from ddplint.analysis.facts import CallSite, FunctionInfo, ModuleFacts
    from ddplint.analysis.flow import Flow
    from ddplint.analysis.records import Context
    from ddplint.analysis.where import WhereModel

# DeepSpeed's device-generic accelerator: `get_accelerator().set_device(i)` makes device i current.
ACCELERATOR_GETTER = "deepspeed.accelerator.get_accelerator"
_RANK_NAME = re.compile(r"(?:^|_)rank$")


@dataclass(eq=False)
class RankDevice:
    """A CUDA device whose index the script computes (`torch.device("cuda", local_rank)`,
    `f"cuda:{local_rank}"`): the rank's own GPU, as a value."""

    node: cst.CSTNode
    context: "Context"


@dataclass(eq=False)
class Placement:
    site: "CallSite"
    kind: str  # "gpu0": names cuda:0 / device 0 | "current": bare "cuda", device of whoever set it
    detail: str  # the offending text, for messages


class DeviceModel:
    def __init__(self, facts: "ModuleFacts", flow: "Flow", ranks: "RankModel", where: "WhereModel") -> None:
        self.facts = facts
        self.flow = flow
        self.ranks = ranks
        self.where = where

    @cached_property
    def placements(self) -> list[Placement]:
        out = []
        queried = self._devices_queried
        for site in self.facts.calls:
            if id(site.node) in queried:
                continue
            placement = self._placement(site)
            if placement is not None:
                out.append(placement)
        return out

    def _placement(self, site: "CallSite") -> Optional[Placement]:
        call = site.node
        names = self.facts.qualified_names(call.func)
        if TORCH_DEVICE in names:
            return self._device_call(site)
        if SET_DEFAULT_DEVICE in names:  # every tensor made after it lands there
            target = argument(call, "device", 0)
            return self._device_value(site, target, integer_means_gpu=True) if target is not None else None
        name = last_name(call.func)
        if name in PLACEMENT_METHODS and isinstance(call.func, cst.Attribute) and not self._is_module(call.func.value):
            target = argument(call, "device", 0)
            if target is None:
                return Placement(site, "current", ".cuda()") if name == "cuda" else None
            return self._device_value(site, target, integer_means_gpu=True)
        device = keyword_arg(call, "device")
        if device is not None:  # torch.zeros(..., device="cuda:0")
            return self._device_value(site, device.value, integer_means_gpu=False)
        return None

    @cached_property
    def _devices_queried(self) -> set[int]:
        """`torch.device("cuda:0")` handed straight to a `torch.cuda` query
        (`get_device_properties(torch.device("cuda:0")).major`): nothing is placed there."""
        out: set[int] = set()
        for site in self.facts.calls:
            names = self.facts.qualified_names(site.node.func)
            if any(name.startswith("torch.cuda.") and name not in SET_DEVICE for name in names):
                out.update(id(arg.value) for arg in site.node.args)
        return out

    def _is_module(self, node: cst.BaseExpression) -> bool:
        """`torch.cuda(...)`, `torch.to(...)`: module attributes, not placements."""
        name = dotted_name(node)
        return name is not None and name in self.facts.imports.bindings

    def _device_call(self, site: "CallSite") -> Optional[Placement]:
        call = site.node
        kind = argument(call, "type", 0)
        index = argument(call, "index", 1)
        if kind is None:
            return None
        if index is not None:
            text = string_value(kind)
            if text is not None and _is_cuda(text) and int_value(index) == 0:
                return Placement(site, "gpu0", f'torch.device("{text}", 0)')
            return None
        return self._device_value(site, kind, integer_means_gpu=True)

    def _device_value(self, site: "CallSite", expr: cst.BaseExpression, integer_means_gpu: bool) -> Optional[Placement]:
        """A device given as a literal, or through a variable holding one (`device = "cuda"`).
        A `torch.device(...)` call reached through a variable is judged at that call instead."""
        single_process = self._single_process_values(expr)
        for source in self.flow.sources(expr, site.context.scope, site.context.branches):
            node = source.node
            if node is None or id(node) in single_process or self.where.value_on_single_process_path(node):
                continue
            if source.selected_by is not None:
                # `{0: "cuda:0", 1: "cuda:1"}[rank]`: each rank picks its own device. Any computed
                # key picks one of several devices: not GPU 0 on every rank for sure.
                continue
            text = string_value(node)
            if text is not None:
                found = _classify_string(site, text)
                if found is not None:
                    return found
            elif isinstance(node, cst.Call) and self._returns_the_current_device(node):
                return Placement(site, "current", f"{one_line(self.facts.module.code_for_node(node.func), 24)}()")
            elif integer_means_gpu and int_value(node) == 0 and not isinstance(node, cst.UnaryOperation):
                if self._zero_is_a_rank(node, source.via):
                    continue
                return Placement(site, "gpu0", f"{last_name(site.node.func)}(0)")
        return None

    def _returns_the_current_device(self, call: cst.Call) -> bool:
        """`get_device()` of a project module whose function returns `torch.device("cuda")`."""
        project = self.facts.project
        return project is not None and project.returns_current_device(self.facts, call)

    def _single_process_values(self, expr: cst.BaseExpression) -> set[int]:
        """Values of `expr` that reach it only on the non-distributed path: `args.gpu = 0`
        replaced by `if args.distributed: args.gpu = args.local_rank` before the placement."""
        key = dotted_name(expr)
        use = self.facts.context_of(expr)
        if key is None or use is None:
            return set()
        out: set[int] = set()
        for binding in self.facts.reaching(use.scope.lookup(key), expr):
            for branch, in_body in self.facts.hidden_in_arms(binding, expr):
                if self.ranks.distributed_polarity(branch.test, use.scope) == in_body:
                    out.add(id(binding.value))
        return out

    def _zero_is_a_rank(self, node: cst.CSTNode, via: tuple) -> bool:
        """A 0 that stands for rank 0 of a one-process run rather than a hard-coded GPU:
        assigned to a rank variable (`rank = 0` on the non-distributed path) or passed in by a
        call on the single-process path (`main_worker(0, args)` when not distributed)."""
        ranks, where = self.ranks, self.where
        if any(_RANK_NAME.search(name.lower()) for name in self.facts.assigned_to.get(id(node), ())):
            return True
        return any(not where.call_in_a_rank(call) or ranks.call_runs_on_one_rank_only(call) for call in via)

    # -- the rank's own GPU, as a value ------------------------------------------------------------
    @cached_property
    def rank_devices(self) -> list[RankDevice]:
        """Where the file builds a CUDA device from a computed index: `torch.device("cuda", i)`,
        `f"cuda:{i}"`, `"cuda:%d" % i`, `"cuda:{}".format(i)`, `"cuda:" + str(i)`, in source
        order. Such a value places tensors on that GPU, but does not make it the current device."""
        out = []
        for node in walk(self.facts.module):
            index = _computed_cuda_index(node, self.facts)
            if index is None:
                continue
            context = next((self.facts.context_of(n) for n in walk(index) if isinstance(n, cst.Name)), None)
            if context is not None:
                out.append(RankDevice(node, context))
        return out

    @cached_property
    def gpu_group_starts(self) -> list["CallSite"]:
        """The file's own `init_process_group(...)` calls whose group runs on GPUs: an NCCL
        backend, or one not written as a literal (none, a config value: torch picks NCCL when
        CUDA is there) in a file that uses CUDA or names NCCL for another of its starts."""
        starts = [
            (site, string_value(argument(site.node, "backend", 0)))
            for site in self.facts.calls_named("torch.distributed.init_process_group")
        ]
        names_nccl = any(text is not None and "nccl" in text.lower() for _, text in starts)
        on_gpus = names_nccl or self.uses_gpu
        return [site for site, text in starts if (text is None and on_gpus) or (text is not None and "nccl" in text.lower())]

    @cached_property
    def current_device_work(self) -> list["CallSite"]:
        """Calls that work on the current CUDA device without naming one: `torch.cuda.synchronize()`,
        `torch.cuda.current_device()`, memory queries, an NCCL `dist.barrier()` without
        `device_ids` (it picks the current device for its communicator), and a
        `DataLoader(..., pin_memory=True)` (its pinning thread makes the current device its own
        and pins through that device's context: GPU 0 in every rank until one is set)."""
        out = []
        for site in self.facts.calls:
            names = self.facts.qualified_names(site.node.func)
            if not names.isdisjoint(CURRENT_DEVICE_CALLS) and _names_no_device(site.node, names):
                out.append(site)
            elif "torch.distributed.barrier" in names and keyword_arg(site.node, "device_ids") is None:
                out.append(site)
            elif not names.isdisjoint(DATALOADER) and _pins_memory(site.node):
                out.append(site)
            elif self.work_in_project(site) is not None:
                out.append(site)
        return out

    def work_in_project(self, site: "CallSite") -> Optional[str]:
        """Where ("trainer.py:12") the project function or class this call runs works on the
        current device (`offered_current_device_work` of its module's summary), if it does."""
        project = self.facts.project
        if project is None:
            return None
        found = project.current_device_work(self.facts, site)
        if found is None:
            built = self._project_instance_of(site)
            found = project.current_device_work(self.facts, site, built) if built is not None else None
        return found

    def _project_instance_of(self, site: "CallSite") -> Optional[cst.Call]:
        """`C(...)`, the one call that builds the receiver of a method call (`trainer.fit()` after
        `trainer = C(...)`, or `C(...).fit()`), when the project may resolve `C`."""
        func = site.node.func
        if not isinstance(func, cst.Attribute) or self._is_module(func.value):
            return None
        if isinstance(func.value, cst.Call):
            return func.value
        sources = self.flow.sources(func.value, site.context.scope, site.context.branches)
        calls = [source.node for source in sources if isinstance(source.node, cst.Call)]
        return calls[0] if len(calls) == 1 and len(sources) == 1 else None

    @cached_property
    def offered_current_device_work(self) -> dict[str, "CallSite"]:
        """For the module's summary: its top-level functions and classes whose code works on the
        current CUDA device when a caller runs it (a class: its `__init__`; `Class.method`: a
        public method of a top-level class, for callers that call it on an instance they built),
        itself or through the module's own functions and methods: current_device_work, or a
        placement on the current device (`.cuda()`, `.to("cuda")`, `.to(self.device)` holding
        `torch.device("cuda")`; a device handed in as a parameter is the caller's). Name -> the
        first such call. Nothing in a module that makes a device current anywhere (or declares
        one GPU per process): the order to its work is the caller's business there, and the
        rule prefers silence."""
        facts = self.facts
        if self.sets_device_per_rank or self.one_gpu_per_process:
            return {}
        written = [site for site in facts.calls if self._written_on_the_current_device(site)]
        work = {
            id(site.node)
            for site in [*self.current_device_work, *written]
            if not self.ranks.call_runs_on_one_rank_only(site)
        }
        if not work:
            return {}
        out: dict[str, "CallSite"] = {}
        for function in facts.functions:
            if function.scope.parent is not facts.module_scope or function.class_name is not None:
                continue
            found = self._first_work_reached([function], work)
            if found is not None:
                out[function.name] = found
        for name, owner in facts.classes.items():
            if owner.scope is None or owner.scope.parent is not facts.module_scope:
                continue
            found = self._first_work_reached(facts.methods_of(name, "__init__"), work)
            if found is not None:
                out[name] = found
            for method in facts.functions:
                if method.class_name == name and method.scope.parent is owner.scope and not method.name.startswith("_"):
                    found = self._first_work_reached([method], work)
                    if found is not None:
                        out[f"{name}.{method.name}"] = found
        return out

    @cached_property
    def offered_current_device_values(self) -> set[str]:
        """For the module's summary: its top-level functions that return the current CUDA device
        as a value (`return torch.device("cuda" if torch.cuda.is_available() else "cpu")`), in a
        module that never makes a device current (one that does: its caller may have run it)."""
        facts = self.facts
        if self.sets_device_per_rank or self.one_gpu_per_process:
            return set()
        return {
            function.name
            for function in facts.functions
            if function.class_name is None and function.scope.parent is facts.module_scope
            and any(
                self._names_the_current_device(source.node)
                for value, arms in function.returns
                for source in self.flow.sources(value, function.scope, arms)
            )
        }

    @cached_property
    def offered_device_parameters(self) -> dict[str, dict[str, int]]:
        """For the module's summary: {top-level function: {parameter: position}} for the
        parameters a function makes the current CUDA device with (`torch.cuda.set_device(local_rank
        % num_gpus)`), when no call in this module passes them (the caller's argument decides
        the device). Only `set_device`: the words of a module's outline (summaries.outline_from)
        keep a function recordable for it. A function that reads LOCAL_RANK itself is left out:
        the environment may override what it is handed."""
        offered: dict[str, dict[str, int]] = {}
        for value, use in self._device_choices:
            if SET_DEVICE.isdisjoint(self.facts.qualified_names(use.node.func)):
                continue
            function = self._top_level_function(use.context.scope)
            if function is None or _reads_local_rank(function.node):
                continue
            for name in _value_names(value):
                for source in self.flow.sources(name, use.context.scope, use.context.branches):
                    if source.parameter_of is function and source.parameter in function.params:
                        offered.setdefault(function.name, {})[source.parameter] = function.params.index(source.parameter)
        return offered

    def _written_on_the_current_device(self, site: "CallSite") -> bool:
        """`.cuda()`, `.to("cuda")`, `torch.zeros(n, device="cuda")`: moves something onto the
        current device, as written or through a value of the module holding it (`self.device =
        torch.device("cuda")`, then `model.to(self.device)`); not the `torch.device("cuda")` value
        by itself, which places nothing."""
        call = site.node
        if TORCH_DEVICE in self.facts.qualified_names(call.func):
            return False
        name = last_name(call.func)
        if name in PLACEMENT_METHODS and isinstance(call.func, cst.Attribute) and not self._is_module(call.func.value):
            target = argument(call, "device", 0)
            if target is None:
                return name == "cuda"
        else:
            keyword = keyword_arg(call, "device")
            if keyword is None:
                return False
            target = keyword.value
        text = string_value(target)
        if text is not None:
            return _is_cuda(text)
        return any(self._names_the_current_device(source.node) for source in self.flow.sources(target, site.context.scope, site.context.branches))

    def _names_the_current_device(self, node: Optional[cst.CSTNode]) -> bool:
        """`"cuda"` or `torch.device("cuda")` (no index): the current CUDA device, as a value."""
        text = string_value(node) if isinstance(node, cst.BaseExpression) else None
        if text is not None:
            return _is_cuda(text)
        if isinstance(node, cst.Call) and TORCH_DEVICE in self.facts.qualified_names(node.func):
            kind = argument(node, "type", 0)  # `torch.device("cuda" if available else "cpu")` too
            options = alternatives(kind) if kind is not None else []
            return argument(node, "index", 1) is None and any(_is_cuda(string_value(option) or "") for option in options)
        return False

    def _first_work_reached(self, functions: list, work: set[int]) -> Optional["CallSite"]:
        """The first call of `work` that running `functions` reaches, through the module's own
        functions and methods (breadth first, in source order within each function)."""
        facts, seen, queue = self.facts, set(), list(functions)
        while queue:
            function = queue.pop(0)
            if id(function) in seen:
                continue
            seen.add(id(function))
            for site in facts.calls_by_function.get(id(function), []):
                if id(site.node) in work:
                    return site
                queue.extend(callee for callee, _ in facts.functions_called_by(site))
        return None

    # -- the rank's device made current too late ---------------------------------------------------
    @cached_property
    def device_made_current_late(self) -> list[tuple["CallSite", "CallSite"]]:
        """(work, the call that makes the device current), in source order, where work on the current CUDA device
        runs before the one statement of its function that makes the rank's device current: a
        bare NCCL barrier, `.cuda()`, `torch.cuda.synchronize()`, a pinning DataLoader, a
        project barrier helper, or a call of a function of the file that does such work. In
        program order (analysis/reaching.py: the work in an earlier statement of the same
        block path), nothing else makes a device current before it, in that function or in the
        file's code that calls the function: the work lands on GPU 0 in every rank. Where the
        order cannot be told (the two in different arms, a loop around both), nothing is said."""
        facts = self.facts
        # Each call asked once (a file's calls are asked in turn below, and again by the
        # functions' reach; the language server runs this on every edit).
        direct_ids = {id(site) for site in facts.calls if self._makes_device_current(site)}
        makes_current = facts.reaching_test(lambda site: id(site) in direct_ids)

        def sets_at(site: "CallSite") -> bool:
            return id(site) in direct_ids or any(f in makes_current for f in self._local_callees(site))

        def works_at(site: "CallSite") -> bool:
            if id(site) in uses_ids:
                return True
            callees = self._local_callees(site)
            return any(f in uses_current for f in callees) and not any(f in makes_current for f in callees)

        sets = [site for site in facts.calls if sets_at(site)]
        if not sets:
            return []
        uses_ids = {id(site) for site in facts.calls if self._uses_current_device(site)}
        uses_current = facts.reaching_test(lambda site: id(site) in uses_ids)
        set_ids = {id(site) for site in sets}
        direct = [site for site in sets if id(site) in direct_ids]
        out = []
        for work in facts.calls:
            if id(work) in set_ids or not works_at(work):
                continue
            if not self._all_sets_on_the_path_of(work, direct):
                continue  # a set elsewhere (another method, a set-up function) may run first
            later = _first_later(work, sets)
            if later is not None and not _set_before(work, sets) and not self._callers_set_before(work, sets):
                out.append((work, later))
        return out

    def made_current_only_after(self, site: "CallSite") -> bool:
        """The call runs before the statement of its function that makes the rank's device
        current, and nothing makes one current before it there or in the file's code calling
        the function (device_made_current_late's order, asked of one call that is not work on
        the device itself: `torch.load(p, map_location="cuda")` resolves "cuda" when it runs)."""
        facts = self.facts
        direct = [s for s in facts.calls if self._makes_device_current(s)]
        if not direct or not self._all_sets_on_the_path_of(site, direct):
            return False
        direct_ids = {id(s) for s in direct}
        makes_current = facts.reaching_test(lambda s: id(s) in direct_ids)
        sets = [s for s in facts.calls if id(s) in direct_ids or any(f in makes_current for f in self._local_callees(s))]
        later = _first_later(site, sets)
        return later is not None and not _set_before(site, sets) and not self._callers_set_before(site, sets)

    def device_named(self, site: "CallSite", expr: cst.BaseExpression) -> Optional[str]:
        """"gpu0" when a value handed to a call names GPU 0 (`"cuda:0"`, `torch.device("cuda", 0)`,
        also through a variable), "current" for the current device (`"cuda"`), as `placements`
        judges a `.to(...)` target; None for anything else."""
        if isinstance(expr, cst.Call) and TORCH_DEVICE in self.facts.qualified_names(expr.func):
            inner = next((s for s in self.facts.calls if s.node is expr), None)
            found = self._device_call(inner) if inner is not None else None
        else:
            found = self._device_value(site, expr, integer_means_gpu=False)
        return found.kind if found is not None else None

    def _makes_device_current(self, site: "CallSite") -> bool:
        """`torch.cuda.set_device(i)`, `with torch.cuda.device(i)`, a framework call that sets it
        (`deepspeed.initialize`), DeepSpeed's `get_accelerator().set_device(i)`,
        `init_process_group(device_id=...)` or a project helper that calls set_device."""
        call, facts = site.node, self.facts
        names = facts.qualified_names(call.func)
        if not names.isdisjoint(SET_DEVICE) or not names.isdisjoint(DEVICE_SETTING_CALLS):
            return True
        if self._set_device_unimported(site):
            return True
        if "torch.distributed.init_process_group" in names and keyword_arg(call, "device_id") is not None:
            return True
        owner = receiver(call.func)
        if last_name(call.func) == "set_device" and isinstance(owner, cst.Call):
            if ACCELERATOR_GETTER in facts.qualified_names(owner.func):
                return True
        return facts.project is not None and facts.project.sets_device(facts, site)

    def _set_device_unimported(self, site: "CallSite") -> bool:
        """`torch.cuda.set_device(i)` in a file that never binds `torch` (an `import torch` the
        author forgot: the line fails with a NameError until it is added). The intent is plain,
        and reading the device as never set would report the line that sets it."""
        imports = self.facts.imports
        if "torch" in imports.bindings or "torch" in imports.local_names or imports.star_modules:
            return False  # the file's own answer first: asked of every call
        return dotted_name(site.node.func) in SET_DEVICE

    def _uses_current_device(self, site: "CallSite") -> bool:
        """Work on the current device (current_device_work), a placement on it that moves
        something there (`.cuda()`, `.to("cuda")`, `torch.zeros(..., device="cuda")`; not the
        `torch.device("cuda")` value, which is resolved when used), or a project helper whose
        collective is a barrier (NCCL picks the current device for it)."""
        if id(site.node) in self._current_work_ids:
            return True
        facts = self.facts
        if facts.project is not None:
            reach = facts.project.collective(facts, site)
            if reach is not None and reach.name == "barrier" and not reach.subgroup:
                return True
        return False

    @cached_property
    def _current_work_ids(self) -> set[int]:
        work = {id(site.node) for site in self.current_device_work}
        work.update(
            id(p.site.node)
            for p in self.placements
            if p.kind == "current" and TORCH_DEVICE not in self.facts.qualified_names(p.site.node.func)
        )
        return work

    def _local_callees(self, site: "CallSite") -> list:
        """The file's functions a call may run (by name: `main()`, `setup(args)`)."""
        func = site.node.func
        if isinstance(func, cst.Name):  # by the name index, not a scan of every function per call
            return [f for f in self.facts.functions_by_name.get(func.value, ()) if f.class_name is None]
        return []

    def _all_sets_on_the_path_of(self, work: "CallSite", direct: list["CallSite"]) -> bool:
        """Every call of the file that makes a device current sits in the work's function or in
        a function of the file it calls (by name, transitively): then their order to the work
        is known. A set in another method or function (`setup_distributed()` that the caller
        runs before `prepare()`) may run before the work, in an order the file does not show."""
        facts = self.facts
        scopes, queue = set(), [facts.function_of(work.context.scope)]
        while queue:
            function = queue.pop()
            if function is None or id(function.scope) in scopes:
                continue
            scopes.add(id(function.scope))
            for call in facts.calls_by_function.get(id(function), []):
                queue.extend(self._local_callees(call))
        home = work.context.scope
        return all(site.context.scope is home or id(site.context.scope) in scopes for site in direct)

    def _callers_set_before(self, work: "CallSite", sets: list["CallSite"]) -> bool:
        """The function holding the work is called (in this file) after a device was made
        current there, or by a function that is: then the device is set when the work runs."""
        facts, seen = self.facts, set()
        queue = [facts.function_of(work.context.scope)]
        while queue:
            function = queue.pop()
            if function is None or id(function) in seen:
                continue
            seen.add(id(function))
            for call, _ in facts.call_sites_of(function):
                if _set_before(call, sets):
                    return True
                queue.append(facts.function_of(call.context.scope))
        return False

    @cached_property
    def current_work_after_group_start(self) -> Optional["CallSite"]:
        """Work on the current CUDA device that the function starting an NCCL group runs after
        the start, in program order: itself, or through a function of the file it calls there
        (`init_process_group(...)`, then `load_sharded(model)` that asks
        `torch.cuda.current_device()`). No caller can make a device current between the two,
        so in a file that never makes one current the work runs on GPU 0 in every rank, unless
        the callers make it current before the call: not when a top-level function's callers in
        the project make a device current (before or after: the order is not compared)."""
        facts = self.facts
        work_ids = {id(site) for site in facts.calls if self._uses_current_device(site)}
        reaches_work = facts.reaching_test(lambda site: id(site) in work_ids)
        for start in self.gpu_group_starts:
            function = facts.function_of(start.context.scope)
            if function is None:
                continue
            work = self._work_after(start, function, work_ids, reaches_work)
            # Asked last: the callers' answer reads the project (and keys the cached result on it).
            if work is not None and not self.callers_choose_device(function):
                return work
        return None

    def _work_after(self, start: "CallSite", function: "FunctionInfo", work_ids: set, reaches_work) -> Optional["CallSite"]:
        """The first call of `function` after the group `start` that works on the current device,
        itself or through the file's functions it calls, made on every rank."""
        loops = {id(loop) for loop in start.context.loops}
        for site in self.facts.calls_by_function.get(id(function), []):
            if site.context.scope is not start.context.scope or loops & {id(loop) for loop in site.context.loops}:
                continue  # a loop around both runs the work before the next start
            if id(site) not in work_ids and not any(f in reaches_work for f in self._local_callees(site)):
                continue
            if order(start.context.path, site.context.path) == "before" and not self.ranks.call_runs_on_one_rank_only(site):
                return site
        return None

    def callers_choose_device(self, function: Optional["FunctionInfo"]) -> bool:
        """A top-level function of the file that modules of the project call on every rank, one
        of which makes a device current (ProjectIndex.rank_callers_choose_device): the device is
        the caller's to choose (`torch.cuda.set_device(device_id)`, then `distributed_init()`)."""
        project, facts = self.facts.project, self.facts
        if project is None or function is None or function.class_name is not None or function.scope.parent is not facts.module_scope:
            return False
        return project.rank_callers_choose_device(facts, {function.name}) is True

    @cached_property
    def callers_leave_device_unset(self) -> bool:
        """A set-up helper starts the NCCL group in top-level functions that other modules of the
        project call on every rank (ProjectIndex.rank_callers), and none of those modules makes
        a device current (itself or through its project helpers): then no one does, and the
        group's current device is GPU 0 in every rank. False when no module is seen calling it
        (a library's entry point: its users may set the device)."""
        facts = self.facts
        if facts.project is None:
            return False
        starts = {id(site.node) for site in self.gpu_group_starts}
        entries = {
            function.name
            for function in facts.functions_reaching(lambda site: id(site.node) in starts)
            if function.class_name is None and function.scope.parent is facts.module_scope
        }
        return bool(entries) and facts.project.rank_callers_choose_device(facts, entries) is False

    def callers_choose_device_for(self, context: "Context") -> bool:
        """The code at `context` sits in a top-level function of a module that is not run as a
        program, and the modules calling that function on every rank make a device current (or
        are reported for their own placements): a rank device computed there is current by
        the time it runs (`train(...)` of a utilities module, called after
        `torch.cuda.set_device(local_rank)`)."""
        facts = self.facts
        if facts.project is None:
            return False
        entries = self._entry_functions(self._top_level_function(context.scope))
        return bool(entries) and facts.project.rank_callers_choose_device(facts, entries) is True

    def _top_level_function(self, scope) -> Optional["FunctionInfo"]:
        facts = self.facts
        function = facts.function_of(scope)
        while function is not None and function.scope.parent is not None and function.scope.parent is not facts.module_scope:
            function = facts.function_of(function.scope.parent)
        return function if function is not None and function.class_name is None else None

    def _entry_functions(self, function: Optional["FunctionInfo"]) -> set[str]:
        """The top-level functions through which other modules reach `function`: itself when
        this file never calls it, else the entries of its callers here (`evaluation()` called by
        `train()`); empty when code outside a top-level function calls it."""
        entries: set[str] = set()
        todo, seen = [function], set()
        while todo:
            current = todo.pop()
            if current is None:
                return set()
            if id(current) in seen:
                continue
            seen.add(id(current))
            callers = self.facts.call_sites_of(current)
            if not callers:
                entries.add(current.name)
            todo.extend(self._top_level_function(site.context.scope) for site, _ in callers)
        return entries

    @property
    def chooses_device_or_is_reported(self) -> bool:
        """What a set-up helper's caller answers (callers_leave_device_unset): it makes a device
        current (or declares one GPU per process), or it places work on the current device
        itself, which DDP005 reports in that module."""
        return self.sets_device_per_rank or self.one_gpu_per_process or any(p.kind == "current" for p in self.placements)

    @cached_property
    def group_may_run_on_gpus(self) -> bool:
        """The process group is NCCL, or may be: the file starts none itself (a helper does), or
        one of its starts is NCCL. A file that starts only `gloo` groups keeps CUDA out of its
        communication; its placements name their devices."""
        own = any(True for _ in self.facts.calls_named("torch.distributed.init_process_group"))
        return not own or bool(self.gpu_group_starts)

    # -- a launcher flag as the rank's GPU ---------------------------------------------------------
    @cached_property
    def local_rank_flag_defaulting_to_zero(self) -> Optional[cst.Call]:
        """`parser.add_argument("--local_rank", default=0)` whose value picks this rank's GPU
        (`torch.cuda.set_device(args.local_rank)`, `.cuda(args.local_rank)`, `device_ids=[...]`)
        in a file that never reads LOCAL_RANK from the environment. `torch.distributed.launch`
        filled that flag; torchrun only sets the environment variable (and launch, since torch
        2.0, passes `--local-rank`), so under today's launchers every rank keeps the default,
        GPU 0."""
        facts = self.facts
        flags = [(site, dest) for site in facts.calls if (dest := _local_rank_flag_with_zero_default(site.node))]
        if not flags or self._mentions_local_rank_variable:
            return None
        helpers = self._project_device_choices
        if not (self.starts_process_group or any(starts for _, _, starts in helpers)):
            return None
        handed = {id(use) for _, use, _ in helpers}
        project = facts.project
        if project is not None and any(project.sets_device(facts, site) and id(site) not in handed for site in facts.calls):
            return None  # a helper chooses the device by itself (from the environment, a scheduler)
        choices = self._device_choices + [(value, use) for value, use, _ in helpers]
        for site, dest in flags:
            if any(self._comes_from_flag(value, use, dest) for value, use in choices):
                return site.node
        return None

    @cached_property
    def _project_device_choices(self) -> list[tuple[cst.BaseExpression, "CallSite", bool]]:
        """(argument, call, whether the helper starts the process group) for the arguments this
        file hands to a project helper's parameter that picks the rank's GPU
        (`init_dist(args.local_rank)` where `init_dist` calls `torch.cuda.set_device(local_rank)`;
        also a helper chosen by name, `getattr(dist_utils, "init_dist_%s" % launcher)(...)`)."""
        project = self.facts.project
        if project is None:
            return []
        out = []
        for site in self.facts.calls:
            for parameters, starts in project.device_parameters(self.facts, site):
                for parameter, position in parameters.items():
                    value = argument(site.node, parameter, position)
                    if value is not None:
                        out.append((value, site, starts))
        return out

    @cached_property
    def worker_device_from_shared_option(self) -> Optional[tuple["CallSite", str]]:
        """(the device choice, its option) where a worker this file starts with `mp.spawn` picks
        its GPU from a command-line option with `default=0` (`torch.cuda.set_device(args.gpu)`,
        `.cuda(args.gpu)`) that the worker never replaces: `mp.spawn` hands every worker the same
        `args`, so all of them choose the same GPU; only the index it passes first differs. Not
        when the worker hands `args` to another call (a set-up helper may fill the field)."""
        facts = self.facts
        options = {dest for site in facts.calls if (dest := _option_with_zero_default(site.node))}
        if not options:
            return None
        for value, use in self._device_choices:
            function = facts.function_of(use.context.scope)
            if function is None or not self.where.spawned_directly(function):
                continue
            for dest in options:
                base = _attribute_base(value, dest)
                if base is not None and base in function.params[1:] and not self._hands_on(function, base):
                    if self._comes_from_flag(value, use, dest):
                        return use, dest
        return None

    def _hands_on(self, function: "FunctionInfo", name: str) -> bool:
        """`name` is given whole to a call in `function` (`setup(args)`, `init(cfg=args)`)."""
        return any(
            isinstance(arg.value, cst.Name) and arg.value.value == name
            for site in self.facts.calls_by_function.get(id(function), [])
            for arg in site.node.args
        )

    @cached_property
    def _mentions_local_rank_variable(self) -> bool:
        return any(string_value(node) == "LOCAL_RANK" for node in self._string_nodes if isinstance(node, cst.SimpleString))

    @cached_property
    def _device_choices(self) -> list[tuple[cst.BaseExpression, "CallSite"]]:
        """The values that choose a GPU: `set_device(x)`, `.cuda(x)` / `.to(x)`, `torch.device("cuda", x)`,
        `DistributedDataParallel(device_ids=[x])`."""
        out = []
        for site in self.facts.calls:
            call = site.node
            names = self.facts.qualified_names(call.func)
            if not names.isdisjoint(SET_DEVICE) or last_name(call.func) in PLACEMENT_METHODS:
                value = argument(call, "device", 0)
            elif TORCH_DEVICE in names:
                value = argument(call, "index", 1)
            else:
                ids = keyword_arg(call, "device_ids")
                value = ids.value.elements[0].value if ids is not None and isinstance(ids.value, cst.List) and ids.value.elements else None
            if value is not None:
                out.append((value, site))
        return out

    def _comes_from_flag(self, value: cst.BaseExpression, use: "CallSite", dest: str) -> bool:
        """`value` is (or holds, through assignments) `args.<dest>` of a `parse_args()` result."""
        for source in self.flow.sources(value, use.context.scope, use.context.branches):
            node = source.node
            if isinstance(node, cst.Attribute) and node.attr.value == dest and isinstance(node.value, cst.Name):
                context = self.facts.context_of(node)
                if context is not None and any(
                    _parsed_arguments(holder.node)
                    for holder in self.flow.sources(node.value, context.scope, context.branches)
                ):
                    return True
        return False

    @cached_property
    def uses_gpu(self) -> bool:
        """The script puts work on CUDA: a placement, a `torch.cuda.*` call, or "cuda" in a string
        (`f"cuda:{local_rank}"`, `"cuda" if available else "cpu"`)."""
        if self.placements:
            return True
        if any(q.startswith("torch.cuda.") for site in self.facts.calls for q in self.facts.qualified_names(site.node.func)):
            return True
        return any(
            isinstance(node, (cst.SimpleString, cst.FormattedStringText)) and "cuda" in node.value
            for node in self._string_nodes
        )

    @cached_property
    def _string_nodes(self) -> list:
        from ddplint.analysis.syntax import walk

        return [n for n in walk(self.facts.module) if isinstance(n, (cst.SimpleString, cst.FormattedStringText))]

    # -- who chooses the device per rank --------------------------------------------------------
    @cached_property
    def starts_process_group(self) -> bool:
        if any(True for _ in self.facts.calls_named(*PROCESS_GROUP_STARTERS)):
            return True
        project = self.facts.project  # `init_distributed()` from the project's utils module
        return project is not None and any(
            project.starts_process_group(self.facts, s) and not self._only_launches(s) for s in self.facts.calls
        )

    def _only_launches(self, site: "CallSite") -> bool:
        """`launch_distributed(cfg)` from the project spawns workers that run that module's own
        code: this file stays in the launcher process (one process, one GPU), unless it hands
        the launcher a function of its own to run in the workers (`launch(main, ...)`)."""
        project = self.facts.project
        if project is None or not project.launches_processes(self.facts, site):
            return False
        own = self.facts.functions_by_name
        return not any(
            isinstance(node, cst.Name) and node.value in own for arg in site.node.args for node in walk(arg.value)
        )

    @cached_property
    def sets_device_per_rank(self) -> bool:
        """Something in the file makes "cuda" mean this rank's GPU: `torch.cuda.set_device(...)`,
        `with torch.cuda.device(...)`, `init_process_group(device_id=...)`, `CUDA_VISIBLE_DEVICES`
        set per process, or a framework that does it when it starts."""
        facts = self.facts
        if any(True for _ in facts.calls_named(*SET_DEVICE)) or any(map(self._set_device_unimported, facts.calls)):
            return True
        if facts.project is not None and any(facts.project.sets_device(facts, s) for s in facts.calls):
            return True
        for site in facts.calls_named("torch.distributed.init_process_group"):
            if keyword_arg(site.node, "device_id") is not None:
                return True
        if facts.imports.imports_any(DEVICE_SETTING_FRAMEWORKS):
            return True
        if any(True for _ in facts.calls_named(*DEVICE_SETTING_CALLS)):
            return True
        return self.sets_visible_devices

    @cached_property
    def one_gpu_per_process(self) -> bool:
        """The script says each process sees exactly one GPU, as `cuda:0`: it sets
        `CUDA_VISIBLE_DEVICES` itself, or calls `torch.cuda.set_device(0)` with a literal 0
        (machines with one GPU each, or a launcher that hides the others). Not in a worker the
        file spawns itself: `mp.spawn`'s workers all see the machine's GPUs, so `set_device(0)`
        there puts every one of them on GPU 0."""
        if self.sets_visible_devices:
            return True
        return any(
            site.node.args and int_value(site.node.args[0].value) == 0 and not self.where.in_spawned_worker(site)
            for site in self.facts.calls_named("torch.cuda.set_device")
        )

    @cached_property
    def sets_visible_devices(self) -> bool:
        """`os.environ["CUDA_VISIBLE_DEVICES"] = str(local_rank)`: each process sees one GPU.
        Not a literal list of several GPUs (`"0,1,2,3"`), written once for every process: each
        rank still sees them all, and the current device is still GPU 0 until one is set."""
        scopes = [self.facts.module_scope, *(function.scope for function in self.facts.functions)]
        for scope in scopes:
            for key, bindings in scope.bindings.items():
                if key.split(".")[-1] == "environ" and any(
                    b.item == "CUDA_VISIBLE_DEVICES" and not _several_gpus(b.value) for b in bindings
                ):
                    return True
        for site in self.facts.calls:  # os.environ.update(CUDA_VISIBLE_DEVICES=...), setdefault(...)
            owner = receiver(site.node.func)
            if owner is None or not (last_name(owner) or "").endswith("environ"):
                continue  # a dotted name ends with its last name: the cheap test first
            if (dotted_name(owner) or "").endswith("environ") and _visible_devices_per_process(site.node.args):
                return True
        return False


def _visible_devices_per_process(args) -> bool:
    """The arguments of `environ.update(CUDA_VISIBLE_DEVICES=v)` / `environ.setdefault("CUDA_VISIBLE_DEVICES", v)`
    set the variable to something other than a literal list of several GPUs."""
    for position, arg in enumerate(args):
        if arg.keyword is not None and arg.keyword.value == "CUDA_VISIBLE_DEVICES":
            return not _several_gpus(arg.value)
        if arg.keyword is None and string_value(arg.value) == "CUDA_VISIBLE_DEVICES":
            value = args[position + 1].value if position + 1 < len(args) else None
            return not _several_gpus(value)
    return False


def _several_gpus(value: Optional[cst.BaseExpression]) -> bool:
    """A literal naming more than one GPU (`"0,1,2,3"`): every process that sets it sees them all."""
    text = string_value(value) if value is not None else None
    return text is not None and len([part for part in text.split(",") if part.strip()]) > 1


def _first_later(work: "CallSite", sets: list["CallSite"]) -> Optional["CallSite"]:
    """The first call of `sets` in the work's function that runs after it in program order,
    with no loop around both (the next iteration would run it after the set)."""
    loops = {id(loop) for loop in work.context.loops}
    for site in sets:
        if site.context.scope is not work.context.scope or loops & {id(loop) for loop in site.context.loops}:
            continue
        if order(work.context.path, site.context.path) == "before":
            return site
    return None


def _set_before(work: "CallSite", sets: list["CallSite"]) -> bool:
    """Some call of `sets` in the work's function may run before it: an earlier statement, the
    statement around it, another arm of an `if`/`try` (unknown order: taken as before), the
    same statement, or a loop around both."""
    loops = {id(loop) for loop in work.context.loops}
    for site in sets:
        if site.context.scope is not work.context.scope or site.node is work.node:
            continue  # a call of the function holding the work sets the device by running it
        if loops & {id(loop) for loop in site.context.loops}:
            return True
        if order(site.context.path, work.context.path) in ("before", "around", "apart", "same"):
            return True
    return False


def _names_no_device(call: cst.Call, names: AbstractSet[str]) -> bool:
    """A `torch.cuda` call of CURRENT_DEVICE_CALLS given no device: no positional argument and no
    `device=` (`synchronize()`, `Stream(priority=-1)`), or an event, which never takes one."""
    if not names.isdisjoint(CURRENT_DEVICE_ALWAYS):
        return True
    return all(arg.keyword is not None and arg.keyword.value != "device" for arg in call.args)


def _pins_memory(call: cst.Call) -> bool:
    """`DataLoader(..., pin_memory=True)`, written as the literal."""
    pin = keyword_arg(call, "pin_memory")
    return pin is not None and isinstance(pin.value, cst.Name) and pin.value.value == "True"


def _reads_local_rank(node: cst.CSTNode) -> bool:
    """The code names the LOCAL_RANK environment variable (`os.environ["LOCAL_RANK"]`)."""
    return any(isinstance(n, cst.SimpleString) and string_value(n) == "LOCAL_RANK" for n in walk(node))


def _value_names(expr: cst.CSTNode) -> list[cst.Name]:
    """The variables an expression computes with (`local_rank` and `n` in `local_rank % n`), not
    the attribute names after a dot (`args.gpu` gives `args`)."""
    if isinstance(expr, cst.Name):
        return [expr]
    if isinstance(expr, cst.Attribute):
        return _value_names(expr.value)
    if isinstance(expr, cst.Arg):  # `f(index=i)`: the value, not the keyword's name
        return _value_names(expr.value)
    return [name for child in expr.children for name in _value_names(child)]


def _parsed_arguments(node: Optional[cst.CSTNode]) -> bool:
    """`parser.parse_args()`, `parser.parse_known_args()[0]`."""
    if isinstance(node, cst.Subscript):
        node = node.value
    return isinstance(node, cst.Call) and last_name(node.func) in ("parse_args", "parse_known_args")


def _local_rank_flag_with_zero_default(call: cst.Call) -> Optional[str]:
    """The destination of `add_argument("--local_rank", ..., default=0)` (or `--local-rank`)."""
    dest = _option_with_zero_default(call)
    flags = [string_value(arg.value) for arg in call.args if arg.keyword is None]
    return dest if dest is not None and any(flag in ("--local_rank", "--local-rank") for flag in flags) else None


def _option_with_zero_default(call: cst.Call) -> Optional[str]:
    """The destination of an `add_argument("--gpu", ..., default=0)` option: its `dest=`, else
    its first long flag with dashes read as underscores."""
    if last_name(call.func) != "add_argument":
        return None
    default = keyword_arg(call, "default")
    if default is None or int_value(default.value) != 0:
        return None
    dest = keyword_arg(call, "dest")
    if dest is not None:
        return string_value(dest.value)
    flags = [string_value(arg.value) or "" for arg in call.args if arg.keyword is None]
    long = next((flag for flag in flags if flag.startswith("--")), None)
    return long[2:].replace("-", "_") if long else None


def _attribute_base(value: cst.BaseExpression, attr: str) -> Optional[str]:
    """`args` of `args.<attr>`."""
    if isinstance(value, cst.Attribute) and value.attr.value == attr and isinstance(value.value, cst.Name):
        return value.value.value
    return None


def _computed_cuda_index(node: cst.CSTNode, facts: "ModuleFacts") -> Optional[cst.BaseExpression]:
    """The computed index of a CUDA device written at `node`, or None if `node` writes none."""
    if isinstance(node, cst.Call):
        if TORCH_DEVICE in facts.qualified_names(node.func):
            kind, index = argument(node, "type", 0), argument(node, "index", 1)
            if index is not None and _is_cuda(string_value(kind) or "") and int_value(index) is None:
                return index
            return None
        if last_name(node.func) == "format" and isinstance(node.func, cst.Attribute) and node.args:
            if _is_cuda_prefix(string_value(node.func.value)):  # "cuda:{}".format(i)
                return node.args[0].value
        return None
    if isinstance(node, cst.FormattedString) and len(node.parts) == 2:  # f"cuda:{i}"
        text, value = node.parts
        if isinstance(text, cst.FormattedStringText) and isinstance(value, cst.FormattedStringExpression):
            return value.expression if _is_cuda_prefix(text.value) else None
        return None
    if isinstance(node, cst.BinaryOperation) and _is_cuda_prefix(string_value(node.left)):
        if isinstance(node.operator, cst.Add) or isinstance(node.operator, cst.Modulo):
            return node.right  # "cuda:" + str(i), "cuda:%d" % i
    return None


# One format placeholder for a device index: `{}`, `{0}`, `{:d}`, `{0:d}` (str.format) or `%d`,
# `%i`, `%s` (printf style).
_INDEX_PLACEHOLDER = re.compile(r"\{0?(?::[^{}]*)?\}|%[dis]")


def _is_cuda_prefix(text: Optional[str]) -> bool:
    """`cuda:` followed at most by one format placeholder (`cuda:{}`, `cuda:{:d}`, `cuda:%d`)."""
    if text is None:
        return False
    lowered = text.strip().lower()
    return lowered.startswith("cuda:") and (lowered[5:] == "" or _INDEX_PLACEHOLDER.fullmatch(lowered[5:]) is not None)


def _is_cuda(text: str) -> bool:
    return text.strip().lower() == "cuda"


def _classify_string(site: "CallSite", text: str) -> Optional[Placement]:
    device = text.strip().lower()
    if device == "cuda":
        return Placement(site, "current", f'"{text}"')
    if device == "cuda:0":
        return Placement(site, "gpu0", f'"{text}"')
    return None
