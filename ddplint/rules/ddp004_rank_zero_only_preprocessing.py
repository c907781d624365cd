"""DDP004 rank-zero-only-preprocessing."""

from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from ddplint.analysis.data_work import Work
from ddplint.analysis.facts import BranchSite, CallSite, ModuleFacts
from ddplint.analysis.model import ModuleModel
from ddplint.analysis.syntax import walk
from ddplint.analysis.torch_api import BARRIER_COLLECTIVES, BROADCAST_COLLECTIVES
from ddplint.rules.base import Finding, Rule


def check(model: ModuleModel) -> Iterator[Finding]:
    facts = model.facts
    if not model.distributed:
        return
    for branch in facts.branches:
        arm = model.ranks.single_rank_arm(branch)
        if arm is None or model.ranks.one_rank_per_group(branch.test, branch.context.scope):
            continue
        works = _data_work_in(model, branch, arm)
        if not works:
            continue
        if _data_work_in(model, branch, not arm):
            continue  # the other ranks do the same work in the other arm
        wait = _what_the_others_wait_in(model, branch, arm)
        if wait is None:
            continue
        work = _work_they_wait_for(model, branch, arm, works, wait)
        if work is None:
            continue
        yield RULE.finding(
            branch.node,
            f"only one rank {work.what} while the others wait in `{wait.name}()`",
            why=f"only one rank (rank 0 or a leader) {work.what} (`{work.code}`) while the other ranks "
            f"wait for it in `{wait.name}()`: their GPUs idle for as long as the work takes, which "
            f"grows with the dataset; have every rank load or preprocess its own shard, or do it "
            f"once, cache the result, and let every rank read the cache",
        )


def _arm_node(branch: BranchSite, arm: bool) -> Optional[cst.CSTNode]:
    return branch.node.body if arm else branch.node.orelse


def _data_work_in(model: ModuleModel, branch: BranchSite, arm: bool) -> list[Work]:
    """The data work in one arm, in source order: calls, then loops over a loader or dataset
    (an evaluation loop is DDP010's, not data work)."""
    facts = model.facts
    work_model = model.data.work
    calls = facts.calls_in_arm(branch, arm)
    found = [work for work in map(work_model.work_of, calls) if work is not None]
    if isinstance(branch.node, cst.If):
        for loop in facts.loops:
            if (branch.node, arm) not in loop.context.branches:
                continue
            if model.data.loop_trains(loop) or model.data.evaluation_pass(calls, [loop]) is not None:
                continue
            work = work_model.loop_work(loop, model.data.loaders)
            if work is not None:
                found.append(work)
    return found


def _work_they_wait_for(
    model: ModuleModel, branch: BranchSite, arm: bool, works: list[Work], wait: CallSite
) -> Optional[Work]:
    """Work that scales with the dataset, or a read (`torch.load(path)`, `load_data(...)`)
    whose result is what the other ranks receive in the broadcast: a checkpoint or a config
    read by rank 0 for itself is not what they wait for."""
    facts = model.facts
    for work in works:
        if work.scales:
            return work
    if model.ranks.collective_kind(wait) != "broadcast":
        return None
    received = {n.value for arg in wait.node.args for n in walk(arg.value) if isinstance(n, cst.Name)}
    for work in works:
        if _results_of(facts, branch, arm, work) & received:
            return work
    return None


def _results_of(facts: ModuleFacts, branch: BranchSite, arm: bool, work: Work) -> set[str]:
    """Names that hold the work's result or something computed from it, following the arm's
    statements and those after the branch in order (`data = load()`, `box = [data]`)."""
    if isinstance(branch.node, cst.IfExp):
        statements = [branch.context.current_statement()]
    else:
        arm_node = _arm_node(branch, arm)
        if isinstance(arm_node, cst.Else):
            arm_node = arm_node.body
        if isinstance(arm_node, cst.IndentedBlock):
            statements = list(arm_node.body)
        else:  # one-line suite or `elif`
            statements = [arm_node]
    statements += list(branch.context.statements_after())
    tainted: set[str] = set()
    for statement in statements:
        if statement is None:
            continue
        nodes = walk(statement)
        holds_work = any(node is work.node for node in nodes)
        mentions = {node.value for node in nodes if isinstance(node, cst.Name)}
        if holds_work or mentions & tainted:
            tainted |= _names_written_by(nodes)
    return tainted


def _names_written_by(nodes: list[cst.CSTNode]) -> set[str]:
    """Variables a statement assigns or mutates: `x = ...`, `x[0] = ...`, `x.append(...)`,
    `x.copy_(...)`."""
    names = set()
    targets: list[cst.BaseExpression] = []
    for node in nodes:
        if isinstance(node, cst.AssignTarget):
            targets.append(node.target)
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
            targets.append(node.target)
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            targets.append(node.func.value)
    for target in targets:
        for sub in walk(target):
            if isinstance(sub, cst.Name):
                names.add(sub.value)
    return names


def _what_the_others_wait_in(model: ModuleModel, branch: BranchSite, arm: bool) -> Optional[CallSite]:
    """The collective in which the other ranks wait for rank 0's result, if any: a broadcast /
    scatter in the other arm or after the branch, or a barrier after which they do not load data
    themselves (that would be the download-then-everyone-loads pattern, which is fine)."""
    facts = model.facts
    node = branch.node
    ranks = model.ranks
    for site in facts.calls_in_arm(branch, not arm):
        if ranks.collective_kind(site) == "broadcast":
            return site
    statements = list(branch.context.statements_after())
    current = branch.context.current_statement()
    if isinstance(node, cst.IfExp) and current is not None:
        # `objs = broadcast(load() if rank == 0 else None)`: the wait is in the same statement
        statements.insert(0, current)
    following = facts.calls_in_statements(statements)
    for index, site in enumerate(following):
        kind = ranks.collective_kind(site)
        if kind == "broadcast":
            return site
        if kind == "barrier":
            produced = _names_written_in(facts, branch, arm)
            later = following[index + 1 :]
            if any(_redoes_the_work(model, s, produced) for s in later):
                return None
            return site
    return None


def _redoes_the_work(model: ModuleModel, site: CallSite, produced: set[str]) -> bool:
    """After the barrier, does this rank load data itself (rather than wrap what rank 0 made)?"""
    if not model.data.is_data_work(site) or model.ranks.runs_on_one_rank_only(site.context):
        return False
    used = {n.value for arg in site.node.args for n in walk(arg.value) if isinstance(n, cst.Name)}
    return used.isdisjoint(produced)


def _names_written_in(facts: ModuleFacts, branch: BranchSite, arm: bool) -> set[str]:
    """Names the guarded code assigns or mutates (`rows = ...`, `examples.append(...)`)."""
    guarded = facts.calls_in_arm(branch, arm)
    arm_node = _arm_node(branch, arm)
    inside = {id(n) for n in walk(arm_node)} if arm_node is not None else set()
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
        ...) whose body does work that grows with the dataset while the other ranks wait for
        it, in a `broadcast_object_list` / `broadcast` / `scatter` / `scatter_object_list`, or at
        a `barrier` after which they never load the data themselves. The work is named in the
        message:
        - building a dataset (a `Dataset` class, `torchvision.datasets.*`, `ImageFolder`),
          loading one (`load_dataset`, `load_from_disk`) or reading a table (`pd.read_*`);
        - tokenising or preprocessing it (`tokenize(...)`, `preprocess(...)`), mapping or
          filtering a function over it (`ds.map(fn, batched=True)`);
        - iterating a loader or a dataset (`for batch in loader:` computing statistics);
        - a function of the file that does any of these;
        - reading a file (`torch.load`, `np.load`, `json.load`, `pickle.load`) or calling a
          data-named function of another module (`load_data(...)`), or handing a tokenizer to
          one (`convert_examples_to_features(examples, tokenizer)`), only when its result is
          what the broadcast sends to the other ranks.
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
        - Work that does not grow with the dataset: converting a checkpoint, reading reference
          statistics for a score, generating one sample for the log from a literal prompt
          (`tokenizer("Once upon a time")`), packing outputs at exit, a test's assertions.
        - A read (`torch.load(path)`, `np.load(...)`) whose result stays on rank 0: only the
          result the others receive is what they wait for.
        - Datasets made up of a few numbers or random tensors (`TensorDataset(torch.randn(8, 3))`,
          `RandomDataset(16)`): test fixtures.
        - A whole evaluation pass on rank 0 (that is DDP010).
        - Guards on a rank within a sub-group (`mpu.get_tensor_model_parallel_rank() == 0`,
          `dist.get_rank(group=tp_group) == 0`): one rank of every model-parallel group builds
          the batches that group must share, by design.
        - Helpers named for a checkpoint, a model, a config or a tool (`verify_checkpoint(...)`,
          `get_tokenizer()`, `save_tokenizer_assets(...)`), whatever they read.
        - Guards whose other arm does the same data work (every rank loads, rank 0 just with a
          progress bar).
        - Download-only steps: rank 0 downloads, a barrier, then every rank builds the dataset.
        - `main_process_first()` / `torch_distributed_zero_first(rank)` context managers and the
          hand-written form (`if local_rank not in (-1, 0): barrier()` ... everyone loads ...
          `if local_rank == 0: barrier()`).
        - Scripts that are not distributed.
    """,
    blind_spots="""
        - Work done by another module's function is recognised by the callee's name only
          (`tokenize`, `preprocess`, `load_data`); a helper called `setup()` that secretly
          preprocesses is not seen.
        - The collective must be in the same function as the guard (after it, or in its `else`).
        - A file read counts only when the broadcast argument is a variable the read's result
          flows into (assignments, `append`, `copy_`), followed by name.
        - The cost is not estimated: a dataset-building call on a small dataset is reported like
          one on a large dataset.
        - A project's own rank-0 helper is recognised by its name when it is a usual one
          (`is_main_process()`, `is_master()`, `is_rank_zero()` ...); any other (`is_coordinator()`)
          only once declared in `rank-zero-functions` (README, Configuration).
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
        """
        import torch.distributed as dist
        from datasets import load_dataset

        dist.init_process_group("nccl")
        raw = load_dataset("json", data_files="train.jsonl")["train"]
        if dist.get_rank() == 0:  # <- DDP004
            encoded = raw.map(encode_batch, batched=True, num_proc=8)
            encoded.save_to_disk("encoded")
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
        """
        import torch
        import torch.distributed as dist

        dist.init_process_group("nccl")
        if dist.get_rank() == 0:
            # converting a checkpoint once, and one sample for the log: nothing the size of the data
            state = torch.load(args.source_checkpoint, map_location="cpu")
            torch.save(rename_keys(state), args.target_checkpoint)
            prompt = tokenizer("The quick brown fox", return_tensors="pt")
            print(tokenizer.decode(model.generate(**prompt)[0]))
        dist.barrier()
        """,
    ),
)
