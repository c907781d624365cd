"""A tutorial notebook: a single-GPU baseline its cells run, beside distributed code it does not
run in the kernel. The kernel is one process: its own cells are the launching process, never a
rank. So a plain shuffling loader there is right when the distributed functions are only
defined (their calls commented out: "run this with torchrun"), or when the cells start the
workers with `mp.spawn` through a function; a notebook whose cells do start a process group is
judged as distributed."""

from __future__ import annotations

import json

from ddplint.api import lint_document
from ddplint.rules import select_rules

BASELINE = """\
import torch
from torch.utils.data import DataLoader


def single_gpu_baseline(dataset, model, optimizer):
    loader = DataLoader(dataset, batch_size=32, shuffle=True)
    for epoch in range(5):
        for x, y in loader:
            optimizer.zero_grad()
            (model(x) - y).pow(2).mean().backward()
            optimizer.step()
"""

BASELINE_RUN = "single_gpu_baseline(make_dataset(), make_model(), make_optimizer())\n"

DEFINED_ONLY = """\
import os
import torch.distributed as dist


def setup():
    dist.init_process_group("nccl")
    return int(os.environ["LOCAL_RANK"])


def train_ddp():
    local_rank = setup()
    run_epochs(local_rank)

# Run with torchrun, not in the notebook:
# train_ddp()
"""

SPAWNED = """\
import torch.distributed as dist
import torch.multiprocessing as mp


def worker(rank, world_size):
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    run_epochs(rank)


def launch(world_size):
    mp.spawn(worker, args=(world_size,), nprocs=world_size)

launch(2)
"""

STARTED_HERE = """\
import torch.distributed as dist

dist.init_process_group("nccl")
"""


def _codes(*cells: str) -> list[str]:
    document = {
        "cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": cell} for cell in cells],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    found = lint_document(json.dumps(document), "tutorial.ipynb", select_rules(["DDP001"]))
    return [d.code for d in found]


def test_baseline_beside_distributed_functions_never_run_is_left_alone():
    assert _codes(BASELINE, BASELINE_RUN, DEFINED_ONLY) == []


def test_baseline_run_by_the_cells_that_spawn_the_workers_is_left_alone():
    assert _codes(BASELINE, BASELINE_RUN, SPAWNED) == []


def test_baseline_in_a_notebook_whose_cells_start_the_group_is_reported():
    assert _codes(STARTED_HERE, BASELINE, BASELINE_RUN) == ["DDP001"]


def test_once_the_distributed_function_is_called_the_notebook_is_distributed():
    assert _codes(BASELINE, BASELINE_RUN, DEFINED_ONLY.replace("# train_ddp()", "train_ddp()")) == ["DDP001"]
