"""DDP008 and files the script writes from a comprehension: every value a CPU copy
(`{k: v.cpu() for ...}`) means the file loads onto the CPU; values kept on their device
(`v.detach()`, `v`) may be on a GPU and leave the load flagged."""

from __future__ import annotations

import pytest

SCRIPT = """
import os
import torch
import torch.distributed as dist

def run():
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    net = torch.nn.Linear(4, 4).cuda()
    if dist.get_rank() == 0:
        torch.save(SAVED, "out/final.pth")
    dist.barrier()
    net.load_state_dict(torch.load("out/final.pth"))

if __name__ == "__main__":
    run()
"""


@pytest.mark.parametrize(
    "saved",
    [
        "{k: v.cpu() for k, v in net.state_dict().items()}",
        '{name: p.to("cpu").clone() for name, p in net.state_dict().items()}',
        "[p.detach().cpu() for p in net.parameters()]",
    ],
)
def test_file_saved_from_cpu_copies_is_left_alone(lint, saved):
    assert lint(SCRIPT.replace("SAVED", saved), ["DDP008"]) == []


@pytest.mark.parametrize(
    "saved",
    [
        "{k: v.detach() for k, v in net.state_dict().items()}",
        "{k: v for k, v in net.state_dict().items()}",
        "[p.cuda() for p in net.parameters()]",
    ],
)
def test_file_saved_from_values_on_their_device_is_flagged(lint, saved):
    assert lint(SCRIPT.replace("SAVED", saved), ["DDP008"]) == [(12, "DDP008")]
