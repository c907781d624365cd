"""DDP007 under a rank-0 property of a class: `@property def leader(self): return
self.fabric.global_rank == 0`, read as `self.leader`, is a rank guard whatever its name, like
a helper function that returns a rank-0 test."""

from __future__ import annotations

SOURCE = """
import torch
import torch.distributed as dist


class Runner:
    def __init__(self, model):
        dist.init_process_group("nccl")
        self.model = model

    @property
    def leader(self):
        return {leader_test}

    def finish(self, total):
        if self.leader:
            dist.all_reduce(total)
            print(total.item())
"""


def _ddp007_rows(lint, source: str) -> list[int]:
    return [row for row, code in lint(source) if code == "DDP007"]


def test_collective_under_a_rank_zero_property_is_flagged(lint):
    source = SOURCE.replace("{leader_test}", "dist.get_rank() == 0")
    lines = source.lstrip("\n").splitlines()
    row = next(number for number, line in enumerate(lines, 1) if "dist.all_reduce(total)" in line)
    assert _ddp007_rows(lint, source) == [row]


def test_collective_under_a_property_every_rank_shares_is_left_alone(lint):
    source = SOURCE.replace("{leader_test}", "dist.get_world_size() > 1")
    assert _ddp007_rows(lint, source) == []


EARLY_EXIT = """
import torch
import torch.distributed as dist


class Runner:
    def __init__(self):
        dist.init_process_group("nccl")

    @property
    def leader(self):
        return {leader_test}

    def publish(self, total):
        if not self.leader:
            return
        dist.barrier()
        print(total)
"""


def test_collective_after_the_others_leave_through_a_rank_zero_property_is_flagged(lint):
    source = EARLY_EXIT.replace("{leader_test}", "dist.get_rank() == 0")
    lines = source.lstrip("\n").splitlines()
    row = next(number for number, line in enumerate(lines, 1) if "dist.barrier()" in line)
    assert _ddp007_rows(lint, source) == [row]


def test_early_exit_through_a_property_every_rank_shares_is_left_alone(lint):
    source = EARLY_EXIT.replace("{leader_test}", "dist.is_initialized()")
    assert _ddp007_rows(lint, source) == []
