"""DDP005 on a rank device computed inside a utilities module's function (`f"cuda:{local_rank}"`
in `train()` and in the `evaluate()` it calls), next to work on the current device (a NCCL
barrier). Whether that device is current is the callers' business: the training script that
calls `train()` on every rank either makes it current first or does not."""

from __future__ import annotations

from project_support import project_findings

UTILS = """\
import torch
import torch.distributed as dist


def setup():
    dist.init_process_group("nccl")


def evaluate(model, loader, local_rank):
    device = torch.device(f"cuda:{local_rank}")
    for x in loader:
        model(x.to(device))


def train(model, loader, local_rank, epochs):
    for epoch in range(epochs):
        dist.barrier()
        for x in loader:
            model(x.to(f"cuda:{local_rank}")).sum().backward()
        evaluate(model, loader, local_rank)
"""

SCRIPT = """\
import os
import torch
import torch.distributed as dist
from utils import train


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group("nccl")
    {set_device}
    model = build_model().to(local_rank)
    train(model, build_loader(), local_rank, 10)


if __name__ == "__main__":
    main()
"""


def _findings(tmp_path, set_device):
    files = {"utils.py": UTILS, "train.py": SCRIPT.format(set_device=set_device)}
    return project_findings(tmp_path, files, ["DDP005"])


def test_left_alone_when_the_script_calling_train_makes_the_device_current(tmp_path):
    assert _findings(tmp_path, "torch.cuda.set_device(local_rank)") == []


def test_reported_when_no_caller_makes_it_current(tmp_path):
    # At the script's group start, and at the first rank device the helper computes.
    assert _findings(tmp_path, "pass") == [("train.py", 9), ("utils.py", 10)]
