"""DDP011 per-rank-sampler-seed."""

from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from ddplint.analysis.facts import CallSite, Scope
from ddplint.analysis.model import ModuleModel
from ddplint.analysis.syntax import argument
from ddplint.analysis.torch_api import DISTRIBUTED_SAMPLER_POSITIONS
from ddplint.rules.base import Finding, Rule, held_as


def check(model: ModuleModel) -> Iterator[Finding]:
    facts = model.facts
    data = model.data
    for sampler in data.samplers:
        if not sampler.shuffles or sampler.built_in is not None:
            continue  # without shuffling the seed is never used; another module's is judged there
        seed = argument(sampler.site.node, "seed", DISTRIBUTED_SAMPLER_POSITIONS["seed"])
        if seed is None:
            continue
        reason = _why_it_differs(model, sampler.site, seed)
        if reason is None:
            continue
        yield RULE.finding(
            sampler.site.node,
            f"the seed of {held_as(facts, sampler.site.node, 'this DistributedSampler')} differs between ranks: their shards overlap",
            why=f"DistributedSampler seed {reason}, so the ranks shuffle with different permutations: "
            f"each rank takes its slice of a different order, the slices overlap, some samples "
            f"are trained on twice per epoch and others never; give every rank the same seed "
            f"(a constant or args.seed) and call set_epoch(epoch) for a new order each epoch",
        )


def _why_it_differs(model: ModuleModel, site: CallSite, seed: cst.BaseExpression) -> Optional[str]:
    # The seed as written, and what it is computed from through parameters and helper returns
    # (`seed = seed_everything(base)` whose body adds the rank).
    candidates: list[tuple[cst.CSTNode, Scope]] = [(seed, site.context.scope)]
    for source in model.data.flow.sources(seed, site.context.scope, site.context.branches):
        if source.node is not None:
            candidates.append((source.node, source.scope))
    for node, scope in candidates:
        if model.ranks.depends_on_rank(node, scope):
            return "depends on the rank"
    for node, scope in candidates:
        if model.ranks.depends_on_clock(node, scope):
            return "comes from the clock, the process id or fresh randomness, which differ between processes"
    return None


RULE = Rule(
    code="DDP011",
    name="per-rank-sampler-seed",
    summary="A DistributedSampler seeded by the rank or the clock: the ranks' shards overlap.",
    what="""
        Flags a shuffling `DistributedSampler(..., seed=...)` (keyword or fifth positional
        argument) whose seed is computed from the rank (`seed + rank`, `args.seed * local_rank`,
        a variable assigned from one) or from something that differs between processes
        (`time.time()`, `datetime.now()`, `os.getpid()`, `os.urandom`, an unseeded
        `random.randint`).
    """,
    why="""
        DistributedSampler shards by permuting the whole index list with `seed + epoch` and giving
        rank r every world_size-th element starting at r. That only partitions the dataset when
        every rank draws the same permutation. With a per-rank seed each rank slices a different
        permutation: the slices overlap, about a third of the samples (for large world sizes) are
        never seen in an epoch and others are seen several times, while the job looks perfectly
        healthy.
    """,
    fix="""
        Pass the same seed on every rank (`seed=args.seed` or leave the default 0) and call
        `sampler.set_epoch(epoch)` each epoch for a fresh order. Per-rank seeds belong in the
        augmentation / dropout RNG (`torch.manual_seed(seed + rank)`), not in the sampler.
    """,
    silent="""
        - `torch.manual_seed(seed + rank)` and other per-rank seeds of the global RNGs: right for
          augmentation, and DistributedSampler does not use them.
        - `DistributedSampler(..., shuffle=False, seed=...)`: the seed is never used.
        - Seeds the tool cannot trace (a parameter no code in the file passes).
    """,
    blind_spots="""
        - A seed drawn from `random` after `random.seed(...)` with the same value on every rank is
          reported although the ranks agree.
        - Custom sampler classes that take a generator are not looked into.
        - A seed read from an attribute of an object another module fills (`seed=flags.seed`
          where the script's main sets `flags.seed = worker_seeds[local_rank]` before calling the
          loader builder) is not traced across modules: only values computed in the file count.
    """,
    triggers=(b"*DistributedSampler*",),
    distributed_only=False,
    check=check,
    invalid=(
        """
        import torch.distributed as dist
        from torch.utils.data import DataLoader, DistributedSampler

        dist.init_process_group("nccl")
        rank = dist.get_rank()
        sampler = DistributedSampler(train_set, seed=args.seed + rank)  # <- DDP011
        loader = DataLoader(train_set, batch_size=32, sampler=sampler)
        """,
        """
        import time
        from torch.utils.data.distributed import DistributedSampler

        seed = int(time.time())
        sampler = DistributedSampler(train_set, None, None, True, seed)  # <- DDP011
        """,
    ),
    valid=(
        """
        import torch
        import torch.distributed as dist
        from torch.utils.data import DataLoader, DistributedSampler

        dist.init_process_group("nccl")
        rank = dist.get_rank()
        torch.manual_seed(args.seed + rank)  # per-rank augmentation randomness: fine
        sampler = DistributedSampler(train_set, seed=args.seed)
        loader = DataLoader(train_set, batch_size=32, sampler=sampler)
        """,
        """
        import torch.distributed as dist
        from torch.utils.data import DistributedSampler

        rank = dist.get_rank()
        eval_sampler = DistributedSampler(val_set, shuffle=False, seed=rank)  # never shuffles
        """,
    ),
)
