"""Whether a script runs distributed at all, when its only torch.distributed calls sit in helpers
it never calls: a single-GPU copy of a distributed script that kept `reduce_mean()` (an
all_reduce) and commented out its `init_process_group`. Nothing distributed runs, so its plain
shuffling loader is right. When the script does call the helper, or can run any function by
name (`fire.Fire()`), it is judged as distributed."""

from __future__ import annotations

SCRIPT = """
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader


def reduce_mean(tensor, nprocs):
    total = tensor.clone()
    dist.all_reduce(total, op=dist.ReduceOp.SUM)
    return total / nprocs


def train(model, dataset, optimizer):
    # dist.init_process_group(backend="nccl")
    loader = DataLoader(dataset, batch_size=64, shuffle=True)
    for epoch in range(10):
        for x, y in loader:
            loss = (model(x) - y).pow(2).mean()
            {use}
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    {entry}
"""


def _codes(lint, use="pass", entry="train(build_model(), build_dataset(), build_optimizer())"):
    return [code for _, code in lint(SCRIPT.format(use=use, entry=entry), ["DDP001"])]


def test_single_gpu_script_with_an_uncalled_collective_helper_is_left_alone(lint):
    assert _codes(lint) == []


def test_script_that_calls_the_helper_is_judged_distributed(lint):
    assert _codes(lint, use="loss_value = reduce_mean(loss.detach(), 2)") == ["DDP001"]


def test_script_that_runs_functions_by_name_is_judged_distributed(lint):
    # `fire.Fire()` turns every top-level function into a command, reduce_mean included.
    assert _codes(lint, entry="import fire; fire.Fire()") == ["DDP001"]
