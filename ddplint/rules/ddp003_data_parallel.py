"""DDP003 data-parallel."""

from __future__ import annotations

from typing import Iterator

from ddplint.analysis.facts import ModuleFacts
from ddplint.analysis.torch_api import DATA_PARALLEL
from ddplint.rules.base import Finding, Rule

# The functional form does the same scatter / replicate / gather on every call.
FUNCTIONAL_DATA_PARALLEL = {"torch.nn.parallel.data_parallel"}


def check(facts: ModuleFacts) -> Iterator[Finding]:
    local_subclasses = facts.subclasses_of(DATA_PARALLEL)
    for site in facts.calls:
        if facts.is_instance_of(site.node, DATA_PARALLEL | FUNCTIONAL_DATA_PARALLEL, local_subclasses):
            yield RULE.finding(
                site.node,
                "nn.DataParallel drives all GPUs from one process: every step it scatters the "
                "batch from GPU 0, replicates the model and gathers outputs back on GPU 0, so GPU 0 "
                "runs hot while the others wait and the GIL caps throughput; use "
                "DistributedDataParallel with one process per GPU (torchrun)",
            )


RULE = Rule(
    code="DDP003",
    name="data-parallel",
    summary="torch.nn.DataParallel: one process, GPU 0 scatters and gathers everything.",
    what="""
        Flags every call of `torch.nn.DataParallel` / `torch.nn.parallel.DataParallel` (or of a
        class of the file derived from it) and of the functional
        `torch.nn.parallel.data_parallel(module, inputs)`, whatever alias it was imported under. Applies to any
        script, distributed or not.
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
    """,
    blind_spots="""
        - A DataParallel class reached through a factory function or `getattr` is not seen.
    """,
    triggers=(b"DataParallel", b"data_parallel"),
    distributed_only=False,
    check=check,
    invalid=(
        """
        import torch.nn as nn

        model = nn.DataParallel(Net().cuda())  # <- DDP003
        """,
        """
        from torch.nn.parallel import DataParallel as DP

        if n_gpu > 1:
            model = DP(model, device_ids=list(range(n_gpu)))  # <- DDP003
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
    ),
)
