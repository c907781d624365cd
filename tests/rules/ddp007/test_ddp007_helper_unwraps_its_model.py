"""DDP007 on a validation helper that rank 0 alone calls with the DDP-wrapped model, when the
helper replaces that parameter before any forward: with the plain module in one arm and a
freshly loaded model in the other, no forward goes through the wrapper (whose BatchNorm buffers
a forward on one rank would broadcast alone)."""

from __future__ import annotations

SCRIPT = """
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP


def log_validation(model, final=False):
{rebind}
    return model(torch.randn(4, 8)).sum()


def main():
    dist.init_process_group("nccl")
    model = DDP(nn.Sequential(nn.Linear(8, 8), nn.BatchNorm1d(8)).cuda())
    for step in range(100):
        model(torch.randn(4, 8)).sum().backward()
        if dist.get_rank() == 0:
            log_validation(model)


if __name__ == "__main__":
    main()
"""

BOTH_ARMS = """    if final:
        model = load_trained()
    else:
        model = model.module"""


def _codes(lint, rebind):
    return [code for _, code in lint(SCRIPT.format(rebind=rebind), ["DDP007"])]


def test_helper_replacing_its_model_in_both_arms_is_left_alone(lint):
    assert _codes(lint, BOTH_ARMS) == []


def test_helper_forwarding_the_wrapped_model_is_reported(lint):
    assert "DDP007" in _codes(lint, "    pass")
