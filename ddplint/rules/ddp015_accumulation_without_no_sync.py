"""DDP015 accumulation-without-no-sync."""

from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from ddplint.analysis.coordination import builds_ddp_model, skips_gradient_sync
from ddplint.analysis.facts import CallSite, LoopSite
from ddplint.analysis.model import ModuleModel
from ddplint.analysis.records import Scope, excludes
from ddplint.analysis.syntax import walk
from ddplint.analysis.training import steps_the_model
from ddplint.rules.base import Finding, Rule


def check(model: ModuleModel) -> Iterator[Finding]:
    facts = model.facts
    if not model.distributed or not builds_ddp_model(facts) or skips_gradient_sync(facts):
        return
    steps = [site for site in facts.calls if site.name == "step" and steps_the_model(site)]
    for backward in facts.calls:
        if backward.name != "backward" or not backward.context.loops:
            continue
        if _steps_every_k(model, backward, steps) is not None:
            yield RULE.finding(
                backward.node,
                "this backward all-reduces on every micro-batch of the accumulation: use `no_sync()`",
                why="gradient accumulation on a DistributedDataParallel model: the backward runs on "
                "every micro-batch but the optimizer steps only every few, and each backward "
                "all-reduces the whole gradient; k micro-batches cost k all-reduces for one update; run "
                "the backward of the micro-batches that do not step under `with model.no_sync():`",
            )


def _steps_every_k(model: ModuleModel, backward: CallSite, steps: list[CallSite]) -> Optional[CallSite]:
    """An optimizer step in the same loop as the backward, under an `if` inside that loop which
    the backward is not under and whose test counts micro-batches (`(i + 1) % k == 0`)."""
    loop = backward.context.loops[-1]
    for step in steps:
        if step.context.scope is not backward.context.scope or loop not in step.context.loops:
            continue
        if excludes(step.context.branches, backward.context.branches):
            continue  # `if accumulating: ... else: backward(); step()`: never the same iteration
        for branch, arm in step.context.branches:
            if (branch, arm) in backward.context.branches or not _inside(branch, loop):
                continue
            scope = step.context.scope
            if _counts_micro_batches(branch.test, scope) and not model.ranks.depends_on_rank(branch.test, scope):
                return step
    return None


def _inside(node: cst.CSTNode, loop: LoopSite) -> bool:
    body = loop.node if isinstance(loop.node, cst.CompFor) else loop.node.body
    return any(inner is node for inner in walk(body))


def _counts_micro_batches(test: cst.BaseExpression, scope: Scope) -> bool:
    """The test takes a remainder (`step % accumulation == 0`), itself or through a flag assigned
    from one (`stepping = (i + 1) % k == 0` ... `if stepping:`): true once every k iterations."""
    for node in walk(test):
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo):
            return True
        if isinstance(node, cst.Name) and any(
            binding.kind == "assign" and binding.value is not None and _takes_remainder(binding.value)
            for binding in scope.lookup(node.value)
        ):
            return True
    return False


def _takes_remainder(value: cst.CSTNode) -> bool:
    return any(isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo) for node in walk(value))


RULE = Rule(
    code="DDP015",
    name="accumulation-without-no-sync",
    summary="Gradient accumulation on DDP without `no_sync()`: an all-reduce on every micro-batch.",
    what="""
        In a distributed script that wraps a model in `DistributedDataParallel`, flags a
        `.backward()` that runs on every iteration of a loop whose optimizer step (`optimizer.step()`,
        `scaler.step(optimizer)`) runs only every k iterations (under an `if` that takes a remainder,
        `(i + 1) % accumulation_steps == 0`), when nothing in the file keeps DDP from synchronising
        the backward passes that do not step.
    """,
    why="""
        DDP all-reduces the gradients during every backward. With accumulation only the last
        micro-batch's reduced gradient is needed (the sum is the same), so the others pay a full
        all-reduce for nothing: k micro-batches per step cost k times the communication, which on
        several nodes is often most of the step time.
    """,
    fix="""
        Run the backward of the micro-batches that do not step under `with model.no_sync():`
        (`contextlib.nullcontext()` on the stepping one), or set
        `model.require_backward_grad_sync = stepping` before the backward, or use Accelerate's
        `with accelerator.accumulate(model):`. No automatic fix: the condition that picks the
        stepping micro-batch has to be written once for the context manager and the step.
    """,
    silent="""
        - Files that use `no_sync` (any receiver, also handed on uncalled: `ctx = model.no_sync
          if i % k else nullcontext`), the `require_backward_grad_sync` flag,
          Accelerate's `accumulate(...)`, or a DeepSpeed engine (`deepspeed.initialize`), which
          accumulates itself.
        - A step in the same branch as the backward (both every k iterations), and a step under a
          rank condition.
        - Files that build no DistributedDataParallel, and scripts that are not distributed.

        `ddplint verify` counts, per optimizer step, the backward passes that fed it and those of
        them that all-reduced gradient buckets: it confirms a finding when every micro-batch's
        backward all-reduced, and refutes it when one per step did.
    """,
    blind_spots="""
        - The step must be counted with a remainder (`%`), in its test or in a flag assigned
          from one in the same function; a step after an inner loop over the
          micro-batches (`for micro in chunks: loss.backward()` then `optimizer.step()`) is not
          recognised.
        - The wrapper must be built in the file, and the loop must be in the same function as
          the step.
        - A `no_sync` anywhere in the file silences every loop of it.
    """,
    triggers=(b"backward",),
    distributed_only=True,
    check=check,
    invalid=(
        """
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP

        dist.init_process_group("gloo")
        model = DDP(Net())
        accumulation = 4
        for i, (x, y) in enumerate(loader):
            loss = loss_fn(model(x), y) / accumulation
            loss.backward()  # <- DDP015
            if (i + 1) % accumulation == 0:
                optimizer.step()
                optimizer.zero_grad()
        """,
    ),
    valid=(
        """
        import contextlib
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP

        dist.init_process_group("gloo")
        model = DDP(Net())
        accumulation = 4
        for i, (x, y) in enumerate(loader):
            stepping = (i + 1) % accumulation == 0
            with contextlib.nullcontext() if stepping else model.no_sync():
                loss = loss_fn(model(x), y) / accumulation
                loss.backward()
            if stepping:
                optimizer.step()
                optimizer.zero_grad()
        """,
        """
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP

        dist.init_process_group("gloo")
        model = DDP(Net())
        for x, y in loader:
            loss_fn(model(x), y).backward()
            optimizer.step()
            optimizer.zero_grad()
        """,
    ),
)
