"""DDP007 where one function holds several rank-0 blocks that make the same collective: a
second rank-0 block is rank 0 again, not the other ranks, so it does not match the first (the
collective stays unmatched in both). A block the other ranks run (`if rank != 0:`, `if
local_rank not in (-1, 0):`, the `else:` of a rank-0 guard) still matches it."""

from __future__ import annotations

import pytest

HEAD = """
import torch
import torch.distributed as dist

dist.init_process_group("nccl")
t = torch.zeros(1)
"""

FLAGGED = {
    "two-rank-zero-blocks": """
def report(rank):
    if rank == 0:
        print("first")
        dist.all_reduce(t)  # <- DDP007
    step()
    if rank == 0:
        dist.all_reduce(t)  # <- DDP007
""",
    "rank-zero-block-and-else-of-the-others-guard": """
def report(rank):
    if rank == 0:
        dist.barrier()  # <- DDP007
    if rank != 0:
        step()
    else:
        dist.barrier()  # <- DDP007
""",
}

QUIET = {
    "others-first-then-rank-zero": """
def zero_first(local_rank):
    if local_rank not in (-1, 0):
        dist.barrier()
    prepare()
    if local_rank == 0:
        dist.barrier()
""",
    "rank-zero-then-the-others": """
def report(rank):
    if rank == 0:
        dist.barrier()
    if rank != 0:
        dist.barrier()
""",
}


def _marked(source: str) -> list[int]:
    return [number for number, line in enumerate(source.splitlines(), 1) if "# <- DDP007" in line]


@pytest.mark.parametrize("name", sorted(FLAGGED))
def test_rank_zero_blocks_do_not_match_each_other(lint, name):
    source = HEAD + FLAGGED[name]
    assert [row for row, code in lint(source) if code == "DDP007"] == _marked(source.lstrip("\n"))


@pytest.mark.parametrize("name", sorted(QUIET))
def test_a_block_of_the_other_ranks_still_matches(lint, name):
    assert [row for row, code in lint(HEAD + QUIET[name]) if code == "DDP007"] == []
