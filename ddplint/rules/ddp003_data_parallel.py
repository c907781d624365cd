"""DDP003 data-parallel."""

from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from ddplint.analysis.distributed import is_test_code
from ddplint.analysis.facts import CallSite, ModuleFacts
from ddplint.analysis.model import ModuleModel
from ddplint.analysis.syntax import and_parts, argument
from ddplint.analysis.torch_api import (
    DATA_PARALLEL,
    DISTRIBUTED_DATA_PARALLEL,
    FUNCTIONAL_DATA_PARALLEL,
    MODULE_METHODS_RETURNING_SELF,
)
from ddplint.rules.base import Finding, Rule


def check(model: ModuleModel) -> Iterator[Finding]:
    facts = model.facts
    if is_test_code(facts):
        return  # a test wraps models in DataParallel to test code that handles them
    local_subclasses = facts.subclasses_of(DATA_PARALLEL)
    ddp_sites = list(facts.calls_named(*DISTRIBUTED_DATA_PARALLEL))
    for site in facts.calls:
        if not facts.is_instance_of(site.node, DATA_PARALLEL | FUNCTIONAL_DATA_PARALLEL, local_subclasses):
            continue
        if _one_device(model, site):
            continue
        functional = facts.is_instance_of(site.node, FUNCTIONAL_DATA_PARALLEL, set())
        if not functional and _never_runs_a_forward(model, site):
            continue  # (the functional form runs the forward in the call itself)
        ddp_path = _ddp_path_beside(model, site, ddp_sites)
        if ddp_path is not None:
            yield RULE.finding(
                site.node,
                "nn.DataParallel on the fallback path: run without torchrun, one process drives every GPU",
                why=f"nn.DataParallel on the single-process fallback: started without the launcher, "
                f"one process drives every GPU from GPU 0; the DDP path needs {ddp_path}",
            )
            continue
        yield RULE.finding(
            site.node,
            "nn.DataParallel drives every GPU from one process: use DistributedDataParallel",
            why="nn.DataParallel drives all GPUs from one process: GPU 0 scatters, gathers and runs "
            "hot while the others wait; use DistributedDataParallel with one process per GPU "
            "(torchrun)",
        )


def _ddp_path_beside(model: ModuleModel, site: CallSite, ddp_sites: list[CallSite]) -> Optional[str]:
    """How the script's DDP path is taken when this DataParallel is its single-process fallback
    (`if args.distributed: DDP(...) elif n_gpu > 1: DataParallel(...)`), said for the message;
    None when the script has no DDP path to fall back from. Reported all the same (issue 20's
    decision): it is what `python main.py` on an 8-GPU node runs."""
    facts = model.facts
    for branch, arm in site.context.branches:
        if any((branch, not arm) in ddp.context.branches for ddp in ddp_sites):
            return _condition(facts, branch.test, holds=not arm)
    for branch, arm in site.context.branches:
        # in the body of `if cuda and rank == -1 and n_gpu > 1:` every part holds: name the one
        # that picks the single-process run
        parts = and_parts(branch.test) if arm else [branch.test]
        for part in parts:
            polarity = model.ranks.distributed_polarity(part, site.context.scope)
            if polarity is not None and polarity != arm:
                return _condition(facts, part, holds=polarity)
    return None


def _condition(facts: ModuleFacts, test: cst.BaseExpression, holds: bool) -> str:
    text = " ".join(facts.module.code_for_node(test).split())
    if len(text) > 60:
        text = text[:57] + "..."
    return f"`{text}` to be {'true' if holds else 'false'} (torchrun, or the script's distributed option)"


def _one_device(model: ModuleModel, site: CallSite) -> bool:
    """`DataParallel(net, device_ids=[0])` (or a parameter that defaults to a one-GPU list that
    no caller changes): one GPU, nothing scattered."""
    ids = argument(site.node, "device_ids", 1)
    if ids is None:
        return False
    sources = model.flow.sources(ids, site.context.scope, site.context.branches)
    return bool(sources) and all(_one_element(source.node or _default_of(source, ids)) for source in sources)


def _one_element(node) -> bool:
    return isinstance(node, (cst.List, cst.Tuple)) and len(node.elements) == 1


def _default_of(source, ids: cst.BaseExpression):
    """`def initialize(self, gpu_ids=[0])` called from another module: the default stands for
    what callers pass (a caller passing more GPUs is a blind spot)."""
    function = source.parameter_of
    if function is None or not isinstance(ids, cst.Name):
        return None
    params = function.node.params
    for param in (*params.posonly_params, *params.params, *params.kwonly_params):
        if param.name.value == ids.value:
            return param.default
    return None


def _never_runs_a_forward(model: ModuleModel, site: CallSite) -> bool:
    """No forward runs through the wrapper: it is never called (`model(x)`, `model.forward(x)`),
    handed to another call (printing or an `isinstance` check aside), stored on an object, nor
    returned to a caller this file does not show. Wrapped only so that `module.`-prefixed
    checkpoint keys load (`model = DataParallel(model); model.load_state_dict(ckpt); model =
    model.module`), or by a set-up check that builds the model in a function and only prints. A
    function of the file that returns the wrapper hands it to its call sites: they are followed
    in turn. A module-level name may be imported by another module that runs it: unless the
    wrapper only loads weights, it counts as used."""
    facts = model.facts
    found = _wrapper_and_its_returns(model, site)
    if found is None:
        return False
    targets, followed, in_functions = found
    flow = model.flow
    seen: set[int] = set()
    loads = False

    def holds(expr, scope, arms) -> bool:  # the wrapper itself, not something read off it
        if id(expr) in targets:
            return True
        if id(expr) in seen:
            return False
        seen.add(id(expr))
        try:
            if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in MODULE_METHODS_RETURNING_SELF:
                return holds(expr.func.value, scope, arms)  # `model.cuda()` is the same module
            if not isinstance(expr, (cst.Name, cst.Attribute)):
                return False
            return any(
                id(source.node) in targets or (isinstance(source.node, cst.Call) and holds(source.node, source.scope, ()))
                for source in flow.sources(expr, scope, arms)
            )
        finally:
            seen.discard(id(expr))

    def handed_on(expr, scope, arms) -> bool:  # the wrapper inside a value: `(model, optimizer)`
        pending = [expr]
        while pending:
            node = pending.pop()
            if isinstance(node, (cst.Name, cst.Attribute, cst.Call)) and holds(node, scope, arms):
                return True
            if isinstance(node, cst.Attribute):
                continue  # `model.module`: read off the wrapper, not the wrapper
            if isinstance(node, cst.Call):
                pending.extend(arg.value for arg in node.args)  # a method's receiver is not handed on
                continue
            pending.extend(node.children)
        return False

    for call in facts.calls:
        scope, arms = call.context.scope, call.context.branches
        func = call.node.func
        if holds(func, scope, arms):
            return False  # `model(x)`
        if isinstance(func, cst.Attribute) and func.attr.value == "forward" and holds(func.value, scope, arms):
            return False  # `model.forward(x)`
        if isinstance(func, cst.Attribute) and func.attr.value == "load_state_dict":
            owner = func.value.value if isinstance(func.value, cst.Attribute) and func.value.attr.value == "module" else func.value
            loads = loads or holds(owner, scope, arms)
        if _only_inspects(facts, call):
            continue
        if any(handed_on(arg.value, scope, arms) for arg in call.node.args):
            return False  # `train(model, loader)`, `train([model])`
    for function in facts.functions:
        if id(function) in followed:
            continue  # its call sites are among the targets
        if any(handed_on(value, function.scope, arms) for value, arms in function.returns):
            return False  # `return model, optimizer`: returned through something not followed
    for scope in _scopes(facts):
        for key, bindings in scope.bindings.items():
            for binding in bindings:
                if binding.value is None or not handed_on(binding.value, binding.scope, binding.arms):
                    continue
                if "." in key or not holds(binding.value, binding.scope, binding.arms):
                    # `self.model = model`: used wherever the object goes; `models = [model]`:
                    # wherever the list goes (`model = model.cuda()` only names it again)
                    return False
    return loads or in_functions


def _wrapper_and_its_returns(model: ModuleModel, site: CallSite) -> Optional[tuple[dict[int, cst.Call], set[int], bool]]:
    """The wrapper's call and, for each function of the file returning it (`return model` after
    `model = DataParallel(model)`), that function's call sites, transitively: every value that is
    the wrapper when first bound. None when one of them is used in place (`DataParallel(net)(x)`,
    `train(make_model())`) or returned by a function no call of this file reaches (another module
    may run it). Also whether every one of them is made inside a function (bound to a local)."""
    facts = model.facts
    targets: dict[int, cst.Call] = {id(site.node): site.node}
    in_functions = facts.function_of(site.context.scope) is not None
    followed: set[int] = set()  # ids of the functions that return one of them
    pending = [site.node]
    while pending:
        target = pending.pop()
        returned_by = [
            function for function in facts.functions
            if any(_returns_value(model, function, value, target) for value, _ in function.returns)
        ]
        if not any(facts.assigned_to.get(id(form)) for form in _same_module_forms(facts, target)) and not returned_by:
            return None
        for function in returned_by:
            followed.add(id(function))
            callers = facts.call_sites_of(function)
            if not callers:
                return None
            for caller, _ in callers:
                if id(caller.node) not in targets:
                    in_functions = in_functions and facts.function_of(caller.context.scope) is not None
                    targets[id(caller.node)] = caller.node
                    pending.append(caller.node)
    return targets, followed, in_functions


def _same_module_forms(facts: ModuleFacts, target: cst.Call) -> list[cst.BaseExpression]:
    """The target and the calls that return it again (`DataParallel(net).cuda()`)."""
    forms: list[cst.BaseExpression] = [target]
    grown = True
    while grown:  # `DataParallel(net).cuda().eval()`: one more link each round
        grown = False
        for call in facts.calls:
            func = call.node.func
            if isinstance(func, cst.Attribute) and func.attr.value in MODULE_METHODS_RETURNING_SELF and not any(call.node is form for form in forms):
                if any(func.value is form for form in forms):
                    forms.append(call.node)
                    grown = True
    return forms


def _returns_value(model: ModuleModel, function, value: cst.BaseExpression, target: cst.Call) -> bool:
    """`return target`, or `return model` (`.cuda()` ...) where a binding of `model` that reaches
    the return is the target."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in MODULE_METHODS_RETURNING_SELF:
        value = value.func.value
    if value is target:
        return True
    if not isinstance(value, cst.Name):
        return False
    return any(source.node is target for source in model.flow.sources(value, function.scope))


# Builtins that only look at what they are given.
_INSPECTING_BUILTINS = frozenset({"print", "isinstance", "type", "id", "repr", "str", "hasattr"})


def _only_inspects(facts: ModuleFacts, call: CallSite) -> bool:
    func = call.node.func
    return isinstance(func, cst.Name) and func.value in _INSPECTING_BUILTINS and not facts.functions_called_by(call)




def _scopes(facts: ModuleFacts):
    yield facts.module_scope
    for function in facts.functions:
        yield function.scope
    for info in facts.classes.values():
        if info.scope is not None:
            yield info.scope


RULE = Rule(
    code="DDP003",
    name="data-parallel",
    summary="torch.nn.DataParallel: one process, GPU 0 scatters and gathers everything.",
    what="""
        Flags every call of `torch.nn.DataParallel` / `torch.nn.parallel.DataParallel` (or of a
        class of the file derived from it) and of the functional
        `torch.nn.parallel.data_parallel(module, inputs)`, whatever alias it was imported under
        (also one a star-imported project module hands on). Applies to any script, distributed
        or not. DataParallel as the single-process fallback of a script that
        also has a DDP path (`if args.distributed: DDP(...) elif n_gpu > 1: DataParallel(...)`,
        `else:` after `if args.distributed`) is reported too, with its own message naming the
        condition the DDP path needs: it is the path `python main.py` takes on an 8-GPU node
        when the user forgets the launcher (pytorch/examples' ImageNet script's default), exactly
        "GPU 0 at 100 %, the others idle". Changed in issue 20: it used to stay silent there.
    """,
    why="""
        DataParallel is single-process and multi-threaded. Each step it copies the model to every
        GPU, splits the batch from GPU 0, runs the replicas in Python threads (contending for the
        GIL) and gathers all outputs and the loss on GPU 0. GPU 0 therefore holds more memory and
        does more work than the others, which idle while it does, and scaling flattens out after a
        few GPUs. PyTorch itself recommends DistributedDataParallel instead, even on one machine.
    """,
    fix="""
        Launch one process per GPU with `torchrun --nproc-per-node N train.py`, call
        `dist.init_process_group()`, `torch.cuda.set_device(local_rank)`, wrap the model with
        `DistributedDataParallel(model, device_ids=[local_rank])` and give the training DataLoader
        a `DistributedSampler`.
    """,
    silent="""
        - `isinstance(model, nn.DataParallel)` checks and other references that do not build one.
        - `DistributedDataParallel`, strings and comments that mention DataParallel.
        - A DataParallel that never runs a forward: wrapped only to load a checkpoint whose keys
          start with `module.` and unwrapped again, or built in a function (also one returning it
          to its callers in the file) that only prints it: never called (`model(x)`,
          `model.forward(x)`), handed on, returned out of the file's reach or stored. One bound at
          module level is reported unless it only loads weights: another module may import it.
        - Test code (pytest / unittest / nose files, `test_*` or `testName` functions): tests wrap
          models in DataParallel to test the code that handles wrapped models, not to train.
        - A DataParallel over one GPU (`device_ids=[0]`, or a parameter defaulting to a one-GPU
          list no caller changes).
    """,
    blind_spots="""
        - A DataParallel class reached through a factory function or `getattr` is not seen.
        - A `DataParallel` name that nothing imports (the code would raise NameError on that
          path) is not taken for torch's; one a star import of a project module hands on
          (`from models import *` where models.py says `import torch.nn as nn`) is, up to four
          modules deep.
        - A DataParallel made in a function and only yielded, or reached through a callback that
          receives it from another module, is taken as never running a forward.
        - `device_ids` from a parameter that defaults to one GPU is taken as one GPU even if a
          caller in another module passes more.
    """,
    triggers=(b"DataParallel", b"data_parallel"),
    distributed_only=False,
    check=check,
    invalid=(
        """
        import torch.nn as nn

        model = nn.DataParallel(Net().cuda())  # <- DDP003
        for batch in loader:
            loss = model(batch).sum()
        """,
        """
        from torch.nn.parallel import DataParallel as DP

        if n_gpu > 1:
            model = DP(model, device_ids=list(range(n_gpu)))  # <- DDP003
        train(model, loader)
        """,
        """
        import torch.nn as nn
        from torch.nn.parallel import DistributedDataParallel as DDP

        if args.distributed:
            model = DDP(model, device_ids=[args.gpu])
        elif n_gpu > 1:
            model = nn.DataParallel(model)  # <- DDP003
        train(model, loader)
        """,
    ),
    valid=(
        """
        import os
        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP

        dist.init_process_group("nccl")
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        model = DDP(Net().cuda(local_rank), device_ids=[local_rank])
        """,
        """
        import torch.nn as nn

        def unwrap(model):
            # Unwrapping a model someone else wrapped is fine.
            if isinstance(model, (nn.DataParallel, nn.parallel.DistributedDataParallel)):
                return model.module
            return model
        """,
        """
        import torch
        import torch.nn as nn

        def load_weights(path):
            # Wrapped only so that `module.`-prefixed keys load; never run.
            model = nn.DataParallel(Net())
            model.load_state_dict(torch.load(path, map_location="cpu"))
            return model.module
        """,
    ),
)
