"""DDP015 (gradient accumulation on DDP without `no_sync()`): what it flags and what it leaves
alone, beyond the examples on its page."""

from __future__ import annotations

import pytest

from rule_snippets import finding_rows

# -- DDP015 accumulation-without-no-sync ---------------------------------------------------------
ACCUMULATION = """
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

dist.init_process_group("nccl")
net = DistributedDataParallel(Net().cuda(), device_ids=[local_rank])
for step, batch in enumerate(loader):
    scaler.scale(net(batch).loss / 8).backward()
    if step % 8 == 7:
        scaler.step(opt)
        scaler.update()
        opt.zero_grad()
"""


def test_ddp015_flags_a_scaled_backward_every_micro_batch():
    assert finding_rows(ACCUMULATION, "DDP015") == [7]


@pytest.mark.parametrize(
    "change",
    [
        ("    scaler.scale(", "    net.require_backward_grad_sync = step % 8 == 7\n    scaler.scale("),
        ("import torch.distributed as dist", "import torch.distributed as dist\nimport deepspeed\nengine = deepspeed.initialize(model=m)"),
        ("    if step % 8 == 7:", "    if True:"),
        ("    if step % 8 == 7:", "    if dist.get_rank() % 2 == 0:"),
    ],
    ids=["grad-sync-flag", "deepspeed-engine", "steps-every-batch", "rank-condition"],
)
def test_ddp015_leaves_other_shapes_alone(change):
    assert finding_rows(ACCUMULATION.replace(*change), "DDP015") == []


def test_ddp015_is_silent_without_a_ddp_model():
    source = ACCUMULATION.replace("DistributedDataParallel(Net().cuda(), device_ids=[local_rank])", "Net().cuda()")
    assert finding_rows(source, "DDP015") == []


def test_ddp015_flags_only_the_accumulating_arm():
    source = ACCUMULATION.replace(
        "    scaler.scale(net(batch).loss / 8).backward()\n    if step % 8 == 7:\n        scaler.step(opt)\n",
        "    if accumulate:\n"
        "        net(batch).loss.backward()\n"
        "        if step % 8 == 7:\n            opt.step()\n"
        "    else:\n"
        "        net(batch).loss.backward()\n"
        "        opt.step()\n"
        "    if False:\n        scaler.step(opt)\n",
    )
    assert finding_rows(source, "DDP015") == [8]


def test_ddp015_follows_a_stepping_flag():
    source = ACCUMULATION.replace("    if step % 8 == 7:", "    boundary = (step + 1) % 8 == 0\n    if boundary:")
    assert finding_rows(source, "DDP015") == [7]


def test_ddp015_is_not_silenced_by_the_flag_named_in_a_comment():
    source = ACCUMULATION.replace("    if step % 8 == 7:", "    # require_backward_grad_sync is mentioned here only\n    if step % 8 == 7:")
    assert finding_rows(source, "DDP015") == [7]
