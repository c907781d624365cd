"""DDP016 module-forward-bypasses-ddp."""

from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from ddplint.analysis.coordination import builds_ddp_model, holds_ddp_model, runs_without_gradients
from ddplint.analysis.facts import CallSite, ModuleFacts
from ddplint.analysis.model import ModuleModel
from ddplint.analysis.syntax import walk
from ddplint.analysis.torch_api import MODULE_METHODS_WITHOUT_FORWARD
from ddplint.analysis.training import steps_the_model
from ddplint.diagnostics import one_line
from ddplint.rules.base import Finding, FindingFix, NodeEdit, Rule


def check(model: ModuleModel) -> Iterator[Finding]:
    facts = model.facts
    if not model.distributed or not builds_ddp_model(facts):
        return
    backward_scopes = {id(site.context.scope) for site in facts.calls if site.name == "backward"}
    for site in facts.calls:
        wrapped = _wrapped_model_of(site)
        if wrapped is None or id(site.context.scope) not in backward_scopes:
            continue
        if runs_without_gradients(facts, site.context) or _freezes_model(facts, site):
            continue
        if _no_forward_in(model, site, wrapped):
            continue
        if not holds_ddp_model(model, wrapped, site.context):
            continue
        if _no_optimizer_steps_it(model, site, wrapped):
            continue
        if not _backward_after(facts, site):
            continue
        code = facts.module.code_for_node(wrapped)
        yield RULE.finding(
            site.node,
            f"forward through `{one_line(code, 24)}.module` bypasses DDP: its gradients are never all-reduced",
            _call_wrapper_fix(site, wrapped, code),
            why=f"DistributedDataParallel never sees this forward, so the backward that follows does "
            f"not all-reduce these gradients and each rank steps with its own; the replicas drift "
            f"apart with no error; call `{code}(...)` for the training forward",
        )


def _wrapped_model_of(site: CallSite) -> Optional[cst.BaseExpression]:
    """`m` of `m.module(x)` or `m.module.compute_loss(x)`: a call of the wrapped module or of one
    of its methods (not `m.module.state_dict()` and other calls that run no forward: those are
    excluded by needing a backward after them in the same function)."""
    func = site.node.func
    if not isinstance(func, cst.Attribute):
        return None
    if func.attr.value == "module":
        return func.value
    owner = func.value
    if isinstance(owner, cst.Attribute) and owner.attr.value == "module" and site.name not in MODULE_METHODS_WITHOUT_FORWARD:
        return owner.value
    return None


def _no_forward_in(model: ModuleModel, site: CallSite, wrapped: cst.BaseExpression) -> bool:
    """A method of the wrapped module that runs no forward of its own: given no inputs
    (`m.module.train_mode()`), or given what the DDP model's own forward returned
    (`m.module.compute_loss(m(x), y)`, a loss over outputs whose gradients DDP does reduce)."""
    call = site.node
    if not isinstance(call.func, cst.Attribute) or call.func.attr.value == "module":
        return False  # `m.module(x)` is the forward itself
    if not call.args:
        return True
    code = model.facts.module.code_for_node(wrapped)
    for arg in call.args:
        for source in model.flow.sources(arg.value, site.context.scope):
            node = source.node
            if isinstance(node, cst.Call) and model.facts.module.code_for_node(node.func) == code:
                return True
    return False


def _no_optimizer_steps_it(model: ModuleModel, site: CallSite, wrapped: cst.BaseExpression) -> bool:
    """Every torch optimizer the file builds is handed other modules' parameters
    (`Adam(generator.parameters())` beside a DDP-wrapped CLIP used as a frozen feature extractor):
    the wrapped model's gradients are never stepped, so a forward around DDP loses nothing. False
    when the file builds no optimizer, or one whose parameters cannot be traced."""
    facts = model.facts
    optimizers = [s for s in facts.calls if any(_is_optimizer_class(name) for name in facts.qualified_names(s.node.func))]
    if not optimizers:
        return False
    ddp_names = {_root(wrapped)}
    for source in model.flow.sources(wrapped, site.context.scope, site.context.branches):
        if isinstance(source.node, cst.Call) and source.node.args:
            ddp_names.add(_root(source.node.args[0].value))  # `DDP(model, ...)`: the module inside
    stepped: set[Optional[str]] = set()
    for optimizer in optimizers:
        if not optimizer.node.args:
            return False
        owners = _parameter_owners(model, optimizer.node.args[0].value, optimizer)
        if owners is None:
            return False
        stepped |= owners
    return not (stepped & ddp_names)


def _parameter_owners(model: ModuleModel, value: cst.BaseExpression, site: CallSite) -> Optional[set[Optional[str]]]:
    """Root names of the `x.parameters()` / `x.named_parameters()` the value is made from (also
    through a name bound to them: `params = [p for p in net.parameters() if ...]`); None when
    none is found or the name cannot be traced."""
    nodes: list[cst.CSTNode] = [value]
    if isinstance(value, cst.Name):
        for source in model.flow.sources(value, site.context.scope, site.context.branches):
            if source.node is None:
                return None
            nodes.append(source.node)
    owners: set[Optional[str]] = set()
    for node in nodes:
        for call in walk(node):
            if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value in ("parameters", "named_parameters"):
                owners.add(_root(call.func.value))
    return owners or None


def _is_optimizer_class(name: str) -> bool:
    return name.startswith("torch.optim.") and not name.startswith(("torch.optim.lr_scheduler", "torch.optim.swa_utils"))


def _root(expr: cst.BaseExpression) -> Optional[str]:
    while isinstance(expr, (cst.Attribute, cst.Call, cst.Subscript)):
        expr = expr.value if not isinstance(expr, cst.Call) else expr.func
    return expr.value if isinstance(expr, cst.Name) else None


def _freezes_model(facts: ModuleFacts, site: CallSite) -> bool:
    """The function evaluates: it switches the model to `eval()` and never steps it."""
    function = facts.function_of(site.context.scope)
    if function is None:
        return False
    calls = facts.calls_by_function.get(id(function), [])
    return any(c.name == "eval" and not c.node.args for c in calls) and not any(
        c.name == "step" and steps_the_model(c) for c in calls
    )


def _backward_after(facts: ModuleFacts, site: CallSite) -> bool:
    """A `.backward()` runs after the forward in the same function (later in it, or in the same
    loop)."""
    context = site.context
    start = _position(site)
    for other in facts.calls:
        if other.name != "backward" or other.context.scope is not context.scope:
            continue
        if _position(other) > start or any(loop in other.context.loops for loop in context.loops):
            return True
    return False


def _position(site: CallSite) -> tuple:
    return tuple(index for _, index in site.context.path)


def _call_wrapper_fix(site: CallSite, wrapped: cst.BaseExpression, code: str) -> Optional[FindingFix]:
    """`m.module(x)` -> `m(x)`: the same forward, through the wrapper. A method of the module
    (`m.module.compute_loss(x)`) has no such twin on the wrapper: no fix."""
    func = site.node.func
    if not (isinstance(func, cst.Attribute) and func.attr.value == "module"):
        return None
    # Unsafe: the run changes (that is the point), and DDP raises on the next step if this
    # forward leaves parameters unused and the wrapper was built without find_unused_parameters.
    return FindingFix(f"Call `{code}(...)` instead of `{code}.module(...)`", (NodeEdit(code, func),), "unsafe")


RULE = Rule(
    code="DDP016",
    name="module-forward-bypasses-ddp",
    summary="A training forward through `ddp_model.module`: its gradients are never all-reduced.",
    what="""
        In a distributed script, flags a call of the module inside a `DistributedDataParallel`
        wrapper built in the file (`ddp_model.module(x)`), or of one of its methods that runs a
        forward (`ddp_model.module.compute_loss(batch)`), when a `.backward()` follows in the same
        function: a training forward that goes around the wrapper.
    """,
    why="""
        DDP all-reduces gradients only for a backward whose forward went through the wrapper: its
        forward prepares the reducer for the backward that follows. A forward through `.module`
        skips that, so the backward leaves each rank's gradients as they are and each rank's
        optimizer steps with its own. Nothing fails: the replicas drift apart, training uses one
        shard per model, and the checkpoint saved by rank 0 holds one rank's model.
    """,
    fix="""
        Call the wrapper (`ddp_model(x)`) for the training forward. For a method of the module
        (`ddp_model.module.compute_loss(batch)`), make it the module's `forward` (or have
        `forward` dispatch to it) so that the wrapper runs it. The automatic fix (unsafe) rewrites
        `ddp_model.module(x)` to `ddp_model(x)`, the same forward through the wrapper: the
        gradients are then all-reduced, and DDP raises if that forward leaves parameters unused
        while the wrapper was built without `find_unused_parameters=True`. A method call gets no
        fix.
    """,
    silent="""
        - Calls that run no forward: `ddp_model.module.state_dict()`, `.parameters()`, attribute
          reads (`ddp_model.module.config`), a method given no inputs (`.module.train_mode()`),
          or one given what the DDP model's own forward returned (`.module.compute_loss(
          ddp_model(x), y)`: a loss over outputs whose gradients DDP reduces).
        - A wrapped model no optimizer steps: every torch optimizer the file builds is handed
          other modules' parameters (a frozen DDP-wrapped feature extractor beside a trained
          generator). Not when the file builds no optimizer or one whose parameters it cannot
          trace (a project helper building it).
        - Forwards under `torch.no_grad()` / `torch.inference_mode()` (a `with` block or a
          decorator), and in functions that switch the model to `eval()` and never step it.
        - Functions with no `.backward()` after the call: evaluation, generation, logging.
        - Models whose wrapper is not a DistributedDataParallel built in the file, and scripts
          that are not distributed.

        `ddplint verify` compares a fingerprint of the DDP model's parameters across ranks after
        each of the first optimizer steps: it confirms a finding when they differ (the gradients
        were not reduced), and says how many steps all-reduced no gradient at all.
    """,
    blind_spots="""
        - The wrapper must be built in the file (`model = DDP(model, ...)`, also through
          assignments and attributes such as `self.model`); a model wrapped in another module and
          passed in is not followed.
        - A forward through `.module` that is deliberate (the gradients all-reduced by hand after
          the backward, or a backward run under `no_sync` on purpose) is flagged all the same:
          silence it with `# noqa: DDP016`.
        - The backward must be in the same function as the forward; a loss returned to the caller
          and backpropagated there is not followed.
    """,
    triggers=(b"module",),
    distributed_only=True,
    check=check,
    invalid=(
        """
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP

        dist.init_process_group("gloo")
        model = DDP(Net())
        for x, y in loader:
            optimizer.zero_grad()
            loss = loss_fn(model.module(x), y)  # <- DDP016
            loss.backward()
            optimizer.step()
        """,
        """
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel

        class Trainer:
            def __init__(self, net):
                self.model = DistributedDataParallel(net)

            def train_step(self, batch):
                loss = self.model.module.compute_loss(batch)  # <- DDP016
                loss.backward()
                self.optimizer.step()

        dist.init_process_group("nccl")
        """,
    ),
    valid=(
        """
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP

        dist.init_process_group("gloo")
        model = DDP(Net())
        for x, y in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
        """,
        """
        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP

        dist.init_process_group("gloo")
        model = DDP(Net())
        for x, y in loader:
            loss_fn(model(x), y).backward()
            optimizer.step()
            with torch.no_grad():
                preview = model.module(x)
        torch.save(model.module.state_dict(), "ckpt.pt")
        """,
    ),
)
