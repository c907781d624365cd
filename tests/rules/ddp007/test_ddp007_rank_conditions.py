"""Rank conditions read three ways (issue 20, item 4): a side that compares the rank with a
device name is false on every rank of a distributed run, and a guard that lets rank 0 alone
through whenever a rank-independent part is false is still "some ranks" for a collective,
unless the collective itself needs that part to be true."""

from __future__ import annotations

import pytest

HEAD = """
import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp

dist.init_process_group("nccl")
rank = dist.get_rank()
t = torch.zeros(1)
"""

FLAGGED = {
    "rank-or-device-name": """
if (rank == 0) or (rank == "cpu"):
    dist.all_reduce(t)  # <- DDP007
""",
    "rank0-on-most-steps": """
is_rank0 = rank == 0
for step in range(100):
    is_last_step = step == 99
    if is_rank0 and step % 20 == 0 or is_last_step:
        dist.all_reduce(t)  # <- DDP007
""",
    # Block A is rank 0's alone on most steps, block B rank 0's always: neither is the other
    # ranks' answer to the other, since rank 0 makes both calls.
    "rank0-on-most-steps-beside-a-rank0-block": """
for step in range(100):
    if rank == 0 and step % 20 == 0 or step == 99:
        dist.all_reduce(t)  # <- DDP007
    if rank == 0:
        dist.all_reduce(t)  # <- DDP007
""",
    "rank0-unless-a-setting": """
every_rank = False
if rank == 0 or every_rank:
    dist.barrier()  # <- DDP007
""",
    "setting-required-by-another-branch-elsewhere": """
legacy = True
if not legacy or rank == 0:
    if step_is_even():
        dcp.save({}, checkpoint_id="ckpt")  # <- DDP007
""",
}

LEFT_ALONE = {
    "collective-needs-the-setting": """
legacy = False
if not dist.is_initialized() or not legacy or rank == 0:
    if legacy:
        torch.save({}, "model.pt")
    else:
        dcp.save({}, checkpoint_id="ckpt")
""",
    "collective-under-the-setting-itself": """
every_rank = True
if rank == 0 or every_rank:
    if every_rank:
        dist.all_reduce(t)
""",
    "collective-needs-another-kind": """
kind = "global"
if not dist.is_initialized() or kind != "legacy" or rank == 0:
    if kind == "global" and fmt == "torch_dist":
        dcp.save({}, checkpoint_id="ckpt")
""",
    # The other ranks' call under the complementary guard answers rank 0's.
    "rank0-block-answered-by-the-other-ranks-block": """
for step in range(100):
    if rank == 0:
        dist.broadcast(t, src=0)
    if rank != 0:
        dist.broadcast(t, src=0)
""",
    "rank-not-device-name": """
if rank != "cpu":
    dist.all_reduce(t)
""",
    "device-name-on-single-process-path-only": """
if rank == "cpu":
    dist.all_reduce(t)
""",
}


def _expected(body: str) -> list[tuple[int, str]]:
    source = HEAD + body
    return [(n, "DDP007") for n, line in enumerate(source.lstrip("\n").splitlines(), 1) if "# <- DDP007" in line]


@pytest.mark.parametrize("name", sorted(FLAGGED))
def test_flags_collective_that_some_ranks_reach(lint, name):
    body = FLAGGED[name]
    assert lint(HEAD + body, select=["DDP007"]) == _expected(body)


@pytest.mark.parametrize("name", sorted(LEFT_ALONE))
def test_leaves_collective_every_rank_reaches(lint, name):
    assert lint(HEAD + LEFT_ALONE[name], select=["DDP007"]) == []


def test_rank_read_from_the_environment_compared_with_text_zero_is_rank_zero(lint):
    body = """
import os
if os.environ["RANK"] == "0":
    dist.barrier()  # <- DDP007
"""
    assert lint(HEAD + body, select=["DDP007"]) == _expected(body)
