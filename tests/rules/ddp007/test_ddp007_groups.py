"""DDP007 for a collective with an explicit `group=` under a rank-0 guard. Such a group may hold
exactly the ranks that get there, so it stays quiet, unless the same function makes a
collective on that same group on every rank: then every rank belongs to it, and the others
never make the guarded call."""

from __future__ import annotations

import pytest

HEAD = """
import torch.distributed as dist

dist.init_process_group("nccl")
"""

FLAGGED = {
    "same-group-joined-by-every-rank-earlier": """
def publish(engines):
    dist.barrier(group=sync_group())
    if dist.get_rank() == 0:
        notify(engines)
        dist.barrier(group=sync_group())  # <- DDP007
""",
    "same-group-variable-joined-after": """
def publish(engines, group):
    if dist.get_rank() == 0:
        dist.all_reduce(t, group=group)  # <- DDP007
    dist.barrier(group=group)
""",
}

QUIET = {
    "group-never-joined-outside-the-guard": """
def publish(engines, group):
    if dist.get_rank() == 0:
        dist.barrier(group=group)
""",
    "another-group-joined-by-every-rank": """
def publish(engines, group, leaders):
    dist.barrier(group=group)
    if dist.get_rank() == 0:
        dist.barrier(group=leaders)
""",
    "same-group-joined-only-under-the-guard-elsewhere": """
def publish(engines, group):
    if dist.get_rank() == 0:
        dist.barrier(group=group)
    else:
        dist.barrier(group=group)
""",
    "same-group-joined-in-another-function": """
def warm_up(group):
    dist.barrier(group=group)

def publish(engines, group):
    if dist.get_rank() == 0:
        dist.barrier(group=group)
""",
}


def _marked(source: str) -> list[int]:
    return [number for number, line in enumerate(source.splitlines(), 1) if "# <- DDP007" in line]


@pytest.mark.parametrize("name", sorted(FLAGGED))
def test_guarded_collective_on_a_group_every_rank_joins_is_flagged(lint, name):
    source = HEAD + FLAGGED[name]
    assert [row for row, code in lint(source) if code == "DDP007"] == _marked(source.lstrip("\n"))


@pytest.mark.parametrize("name", sorted(QUIET))
def test_guarded_collective_on_a_group_not_shown_to_hold_every_rank_is_quiet(lint, name):
    assert [row for row, code in lint(HEAD + QUIET[name]) if code == "DDP007"] == []
