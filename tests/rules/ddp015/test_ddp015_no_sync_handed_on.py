"""DDP015 when the accumulation skips the all-reduce through a name bound to `model.no_sync`
(`ctx = model.no_sync if i % k else nullcontext`, then `with ctx():`): the context manager is
used, only chosen before the `with`."""

from __future__ import annotations

LOOP = """
from contextlib import nullcontext

import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("nccl")
model = DDP(build_model().cuda(), device_ids=[local_rank])
for i, batch in enumerate(loader):
    {choose}
    with {context}:
        loss = model(batch).mean() / accumulation
        loss.backward()
    if (i + 1) % accumulation == 0:
        optimizer.step()
        optimizer.zero_grad()
"""


def _codes(lint, choose, context):
    return [code for _, code in lint(LOOP.format(choose=choose, context=context), ["DDP015"])]


def test_no_sync_chosen_by_a_conditional_is_left_alone(lint):
    assert _codes(lint, "ctx = model.no_sync if (i + 1) % accumulation else nullcontext", "ctx()") == []


def test_accumulation_without_any_no_sync_is_reported(lint):
    assert _codes(lint, "ctx = nullcontext", "ctx()") == ["DDP015"]
