"""DDP004 rank-zero-only-preprocessing."""

from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from ddplint.analysis.torch_api import BARRIER_COLLECTIVES, BROADCAST_COLLECTIVES
from ddplint.analysis.facts import BranchSite, CallSite, ModuleFacts
from ddplint.analysis.syntax import walk
from ddplint.rules.base import Finding, Rule


def check(facts: ModuleFacts) -> Iterator[Finding]:
    if not facts.distributed:
        return
    for branch in facts.branches:
        arm = facts.ranks.single_rank_arm(branch)
        if arm is None:
            continue
        work = _first_data_work(facts, facts.calls_in_arm(branch, arm))
        if work is None:
            continue
        if _first_data_work(facts, facts.calls_in_arm(branch, not arm)) is not None:
            continue  # the other ranks do the same work in the other arm
        wait = _what_the_others_wait_in(facts, branch, arm)
        if wait is None:
            continue
        yield RULE.finding(
            branch.node,
            f"only one rank (rank 0 or a leader) runs the data loading / preprocessing in this branch "
            f"(`{work.name}(...)`) while the other ranks wait for it in `{wait}`: their GPUs idle "
            f"for the whole step; have every rank load or preprocess its own shard, or cache the "
            f"result once and let every rank read it",
        )


def _arm_node(branch: BranchSite, arm: bool) -> Optional[cst.CSTNode]:
    return branch.node.body if arm else branch.node.orelse


def _first_data_work(facts: ModuleFacts, sites: list[CallSite]) -> Optional[CallSite]:
    for site in sites:
        if facts.data.is_data_work(site):
            return site
    return None


def _what_the_others_wait_in(facts: ModuleFacts, branch: BranchSite, arm: bool) -> Optional[str]:
    """The collective in which the other ranks wait for rank 0's result, if any: a broadcast /
    scatter in the other arm or after the branch, or a barrier after which they do not load data
    themselves (that would be the download-then-everyone-loads pattern, which is fine)."""
    node = branch.node
    ranks = facts.ranks
    for site in facts.calls_in_arm(branch, not arm):
        if ranks.collective_kind(site) == "broadcast":
            return site.name
    statements = list(branch.context.statements_after())
    if isinstance(node, cst.IfExp) and branch.context.current_statement() is not None:
        # `objs = broadcast(load() if rank == 0 else None)`: the wait is in the same statement
        statements.insert(0, branch.context.current_statement())
    following = facts.calls_in_statements(statements)
    for index, site in enumerate(following):
        kind = ranks.collective_kind(site)
        if kind == "broadcast":
            return site.name
        if kind == "barrier":
            produced = _names_written_in(facts, branch, arm)
            later = following[index + 1 :]
            if any(_redoes_the_work(facts, s, produced) for s in later):
                return None
            return site.name
    return None


def _redoes_the_work(facts: ModuleFacts, site: CallSite, produced: set[str]) -> bool:
    """After the barrier, does this rank load data itself (rather than wrap what rank 0 made)?"""
    if not facts.data.is_data_work(site) or facts.ranks.runs_on_one_rank_only(site.context):
        return False
    used = {n.value for arg in site.node.args for n in walk(arg.value) if isinstance(n, cst.Name)}
    return used.isdisjoint(produced)


def _names_written_in(facts: ModuleFacts, branch: BranchSite, arm: bool) -> set[str]:
    """Names the guarded code assigns or mutates (`rows = ...`, `examples.append(...)`)."""
    guarded = facts.calls_in_arm(branch, arm)
    inside = {id(n) for n in walk(_arm_node(branch, arm))}
    names = set()
    for key, bindings in branch.context.scope.bindings.items():
        if any(id(binding.node) in inside for binding in bindings):
            names.add(key.split(".")[0])
    for site in guarded:
        owner = site.node.func.value if isinstance(site.node.func, cst.Attribute) else None
        # `examples.append(x)` mutates examples; `transforms.ToTensor()` does not mutate a module
        if isinstance(owner, cst.Name) and owner.value not in facts.imports.bindings:
            names.add(owner.value)
    return names


RULE = Rule(
    code="DDP004",
    name="rank-zero-only-preprocessing",
    summary="Rank 0 loads or preprocesses the data while the other ranks wait for it.",
    what="""
        Flags a guard that lets one rank through (`if rank == 0:`, `if dist.get_rank() == 0:`,
        `if local_rank in (-1, 0):`, `if is_main_process():`, `if master_process:` with
        `master_process = rank == 0`, `if rank == leader:`, `x = load() if rank == 0 else None`,
        ...) whose body loads or preprocesses data (dataset
        constructors, `torch.load` / `np.load` / `pd.read_*` / `load_dataset`, functions named like
        `load_data`, `preprocess`, `tokenize`, `build_dataset`) when the other ranks then wait for
        the result: in a `broadcast_object_list` / `broadcast` / `scatter` / `scatter_object_list`,
        or at a `barrier` after which they never load the data themselves.
    """,
    why="""
        While rank 0 reads and preprocesses, every other rank sits in the collective with its GPU
        idle: the job runs at the speed of one process for the whole preprocessing time, which on
        real datasets is minutes per launch (and per epoch if it happens inside the loop). With N
        GPUs, N-1 of them are paid for and idle.
    """,
    fix="""
        Let every rank do the work on its own shard (`dataset.shard(num_shards=world_size,
        index=rank)`, a `DistributedSampler`), or do it once and cache it: rank 0 preprocesses and
        saves, a barrier, then every rank loads the cache (`with accelerator.main_process_first():`
        / `training_args.main_process_first()` / `torch_distributed_zero_first` do exactly this).
    """,
    silent="""
        - Logging, printing, TensorBoard / W&B writes, checkpoint saving and loading, and
          reading a config file under a rank-0 guard.
        - Guards whose other arm does the same data work (every rank loads, rank 0 just with a
          progress bar).
        - Download-only steps: rank 0 downloads, a barrier, then every rank builds the dataset.
        - `main_process_first()` / `torch_distributed_zero_first(rank)` context managers and the
          hand-written form (`if local_rank not in (-1, 0): barrier()` ... everyone loads ...
          `if local_rank == 0: barrier()`).
        - Scripts that are not distributed.
    """,
    blind_spots="""
        - "Data work" is recognised by library calls and by function names; a helper called
          `setup()` that secretly preprocesses is not seen.
        - The collective must be in the same function as the guard (after it, or in its `else`).
        - The cost is not estimated: cheap work under a rank-0 guard followed by a broadcast is
          reported like expensive work.
    """,
    # The other ranks can only wait in one of these collectives.
    triggers=tuple(name.encode() for name in sorted(BROADCAST_COLLECTIVES | BARRIER_COLLECTIVES)),
    distributed_only=True,
    check=check,
    invalid=(
        """
        import torch.distributed as dist

        dist.init_process_group("nccl")
        rank = dist.get_rank()
        objects = [None]
        if rank == 0:  # <- DDP004
            samples = tokenize(load_raw_corpus("corpus.txt"))
            objects = [samples]
        dist.broadcast_object_list(objects, src=0)
        samples = objects[0]
        """,
        """
        import os
        import pandas as pd
        import torch.distributed as dist

        local_rank = int(os.environ["LOCAL_RANK"])
        dist.init_process_group("gloo")
        if local_rank in (-1, 0):  # <- DDP004
            frame = pd.read_csv("train.csv")
            frame.to_parquet("train.parquet")
        dist.barrier()
        train(model)
        """,
    ),
    valid=(
        """
        import torch.distributed as dist

        dist.init_process_group("nccl")
        rank, world = dist.get_rank(), dist.get_world_size()
        # every rank tokenizes its own slice
        samples = tokenize(load_raw_corpus("corpus.txt")[rank::world])
        """,
        """
        import torch.distributed as dist
        from torchvision import datasets

        dist.init_process_group("gloo")
        if dist.get_rank() == 0:
            datasets.MNIST("data", download=True)  # download once
        dist.barrier()
        train_set = datasets.MNIST("data", train=True)  # then every rank loads it
        """,
        """
        import torch
        import torch.distributed as dist

        dist.init_process_group("gloo")
        if dist.get_rank() == 0:
            print(f"epoch {epoch} loss {loss:.3f}")
            torch.save(model.state_dict(), "checkpoint.pt")
        dist.barrier()
        """,
    ),
)
