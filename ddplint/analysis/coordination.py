"""How ranks coordinate around one place in the code (DDP013 - DDP016).

- which `with` blocks enclose a place (`model.no_sync()`, `torch.no_grad()`,
  `accelerator.main_process_first()`), and the decorators of its function;
- whether a LightningModule's code runs in one process per GPU (the file's Trainers not
  pinned to one device);
- whether rank 0 runs a place before the others (a single-rank guard, a rank-0-first context
  manager, the `if rank != 0: barrier()` ... `if rank == 0: barrier()` pair, a framework hook
  that runs on rank 0 only);
- whether an expression holds a DistributedDataParallel-wrapped model;
- whether a file keeps DDP from all-reducing on some backward passes (`no_sync`, its flag,
  Accelerate's `accumulate`, a DeepSpeed engine).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

import libcst as cst

from ddplint.analysis.syntax import int_value, keyword_arg, last_name, string_value, walk
from ddplint.analysis.torch_api import (
    BARRIER_COLLECTIVES,
    DISTRIBUTED_DATA_PARALLEL,
    GRADIENT_FREE,
    INTERPROCESS_LOCKS,
    LIGHTNING_MODULE,
    LIGHTNING_TRAINER,
    NO_SYNC_CONTEXTS,
    NO_SYNC_FLAGS,
    RANK_ZERO_FIRST_CONTEXTS,
    RANK_ZERO_HOOKS,
    SELF_ACCUMULATING_ENGINES,
)

if TYPE_CHECKING:
    from ddplint.analysis.facts import ModuleFacts
    from ddplint.analysis.model import ModuleModel
    from ddplint.analysis.records import CallSite, Context, Scope


def enclosing_statements(context: "Context") -> Iterator[cst.CSTNode]:
    """The compound statements around a place, innermost first, within its function (a
    context's statement path starts at its function's body)."""
    for level in range(len(context.path) - 2, -1, -1):
        body, index = context.path[level]
        yield body[index]


def enclosing_with_calls(context: "Context") -> Iterator[cst.Call]:
    """The calls that make the context managers of the `with` blocks around a place."""
    for statement in enclosing_statements(context):
        if isinstance(statement, cst.With):
            for item in statement.items:
                if isinstance(item.item, cst.Call):
                    yield item.item


def _decorator_names(facts: "ModuleFacts", context: "Context") -> set[str]:
    function = facts.function_of(context.scope)
    if function is None:
        return set()
    names = set()
    for decorator in function.node.decorators:
        target = decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator
        names.add(last_name(target) or "")
    return names


def runs_without_gradients(facts: "ModuleFacts", context: "Context") -> bool:
    """Under `with torch.no_grad():` / `inference_mode()`, or in a function decorated with them."""
    if any(last_name(call.func) in GRADIENT_FREE for call in enclosing_with_calls(context)):
        return True
    return bool(_decorator_names(facts, context) & GRADIENT_FREE)


def in_rank_zero_hook(facts: "ModuleFacts", context: "Context") -> bool:
    """In a method a framework runs on (local) rank 0 only (Lightning's `prepare_data`)."""
    function = facts.function_of(context.scope)
    return function is not None and function.class_name is not None and function.name in RANK_ZERO_HOOKS


def lightning_module_on_many_gpus(facts: "ModuleFacts", site: "CallSite") -> bool:
    """In a method of a LightningModule of this file (its `__init__`, a hook), and this file
    builds no Lightning Trainer, or only ones pinned to one device (`devices=1`,
    `accelerator="cpu"`): the Trainer that runs the module (in another module, set up from a
    configuration) takes every GPU by default, one process each, and each process builds the
    module and runs its hooks. Lightning's rank-0 hook (`prepare_data`) runs on one rank."""
    function = facts.function_of(site.context.scope)
    if function is None or function.class_name not in facts.subclasses_of(LIGHTNING_MODULE):
        return False
    if in_rank_zero_hook(facts, site.context):
        return False
    trainers = [call.node for call in facts.calls if not LIGHTNING_TRAINER.isdisjoint(facts.qualified_names(call.node.func))]
    return not trainers or not all(_pinned_to_one_device(trainer) for trainer in trainers)


def _pinned_to_one_device(trainer: cst.Call) -> bool:
    """`Trainer(devices=1)`, `Trainer(gpus=[0])`, `Trainer(accelerator="cpu")`: one process."""
    accelerator = keyword_arg(trainer, "accelerator")
    if accelerator is not None and string_value(accelerator.value) in ("cpu", "mps"):
        return True
    for name in ("devices", "gpus"):
        count = keyword_arg(trainer, name)
        if count is None:
            continue
        value = count.value
        if int_value(value) == 1 or (isinstance(value, (cst.List, cst.Tuple)) and len(value.elements) == 1):
            return True
    return False


def rank_zero_goes_first(model: "ModuleModel", site: "CallSite") -> bool:
    """Rank 0 runs this call while the others wait, or it runs on one rank only: a single-rank
    guard, a rank-0-first context manager (a framework's, or a function of this file that makes a
    barrier), an inter-process file lock, a framework hook run on rank 0, or a barrier under a rank condition in the same
    function (`if rank != 0: barrier()` ... `if rank == 0: barrier()`)."""
    facts = model.facts
    ranks = model.ranks
    context = site.context
    if ranks.runs_on_one_rank_only(context) or in_rank_zero_hook(facts, context):
        return True
    for call in enclosing_with_calls(context):
        if last_name(call.func) in RANK_ZERO_FIRST_CONTEXTS or facts.qualified_names(call.func) & INTERPROCESS_LOCKS:
            return True  # a framework's rank-0-first block, or a lock that lets one process in at a time
        manager = model.flow.call_site(call)
        # `with torch_distributed_zero_first(rank):` written in the file
        if manager is not None and any(
            _barrier_under_rank_condition(model, function.scope) for function, _ in facts.functions_called_by(manager)
        ):
            return True
    return _barrier_under_rank_condition(model, context.scope)


def _barrier_under_rank_condition(model: "ModuleModel", scope: "Scope") -> bool:
    """The scope makes a barrier that only some ranks reach at that point (`if rank != 0:
    barrier()`): the ranks are ordered around the work between the barriers."""
    facts = model.facts
    ranks = model.ranks
    return any(
        other.context.scope is scope
        and other.context.branches
        and ranks.collective_name(other) in BARRIER_COLLECTIVES
        and any(ranks.depends_on_rank(branch.test, scope) for branch, _ in other.context.branches)
        for other in facts.calls
    )


def holds_ddp_model(model: "ModuleModel", expr: cst.BaseExpression, context: "Context") -> bool:
    """The expression's value comes from a `DistributedDataParallel(...)` built in this file."""
    facts = model.facts
    for source in model.flow.sources(expr, context.scope, context.branches):
        if isinstance(source.node, cst.Call) and facts.qualified_names(source.node.func) & DISTRIBUTED_DATA_PARALLEL:
            return True
    return False


def builds_ddp_model(facts: "ModuleFacts") -> bool:
    return any(True for _ in facts.calls_named(*DISTRIBUTED_DATA_PARALLEL))


def skips_gradient_sync(facts: "ModuleFacts") -> bool:
    """The file keeps DDP from all-reducing on some backward passes, or hands accumulation to an
    engine that does it: `with model.no_sync():` (also through a name bound to `model.no_sync`),
    `model.require_backward_grad_sync = ...`,
    `with accelerator.accumulate(model):`, a DeepSpeed engine."""
    if any(site.name in NO_SYNC_CONTEXTS for site in facts.calls):
        return True
    if any(True for _ in facts.calls_named(*SELF_ACCUMULATING_ENGINES)):
        return True
    # the flag, or the context manager handed on uncalled (`ctx = model.no_sync if i % k else
    # nullcontext`, then `with ctx():`): as code (an attribute), not a word in a comment
    names = NO_SYNC_FLAGS | NO_SYNC_CONTEXTS
    return any(name in facts.source for name in names) and any(
        isinstance(node, cst.Attribute) and node.attr.value in names for node in walk(facts.module)
    )
