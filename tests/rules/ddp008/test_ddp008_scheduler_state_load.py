"""DDP008 on a load whose result goes straight into a learning-rate scheduler
(`scheduler.load_state_dict(torch.load(path))`): a scheduler's state is step counts and rates,
no tensor, so there is nothing for map_location to move. The optimizer's state next to it does
hold tensors."""

from __future__ import annotations

RESUME = """
import os
import torch
import torch.distributed as dist
from transformers import get_linear_schedule_with_warmup

dist.init_process_group("nccl")
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
model = build_model().cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
scheduler = {scheduler}
scheduler.load_state_dict(torch.load(os.path.join(run_dir, "scheduler.pt")))
{optimizer_load}
"""


def _rows(lint, scheduler, optimizer_load="pass"):
    return [row for row, _ in lint(RESUME.format(scheduler=scheduler, optimizer_load=optimizer_load), ["DDP008"])]


def test_hugging_face_schedule_state_is_left_alone(lint):
    assert _rows(lint, "get_linear_schedule_with_warmup(optimizer, 100, 1000)") == []


def test_torch_scheduler_state_is_left_alone(lint):
    assert _rows(lint, "torch.optim.lr_scheduler.StepLR(optimizer, 30)") == []


def test_the_optimizer_state_beside_it_is_reported(lint):
    load = 'optimizer.load_state_dict(torch.load(os.path.join(run_dir, "optimizer.pt")))'
    assert _rows(lint, "torch.optim.lr_scheduler.StepLR(optimizer, 30)", load) == [12]
