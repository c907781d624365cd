"""DDP007 through a method of an object a class keeps on `self` (`self.meter = Meter()` in
`__init__`, then `if self.rank == 0: self.meter.log(x)` where `Meter.log` all-reduces): the
method is followed as it is for a local object (`meter = Meter()` ... `meter.log(x)`)."""

from __future__ import annotations

HEAD = """
import torch
import torch.distributed as dist

dist.init_process_group("nccl")


class Meter:
    def __init__(self):
        self.total = torch.zeros(1)

    def log(self, value):
        self.total += value
        dist.all_reduce(self.total)
        return self.total.item()

    def show(self, value):
        print(value)

"""


def _ddp007_rows(lint, body: str) -> list[int]:
    return [row for row, code in lint(HEAD + body) if code == "DDP007"]


def _row_of(body: str, text: str) -> int:
    lines = (HEAD + body).lstrip("\n").splitlines()
    return next(number for number, line in enumerate(lines, 1) if text in line)


def test_rank_zero_call_of_a_collective_method_of_an_object_kept_on_self_is_flagged(lint):
    body = """
class Trainer:
    def __init__(self, rank):
        self.rank = rank
        self.meter = Meter()

    def step(self, loss):
        if self.rank == 0:
            print(self.meter.log(loss))
"""
    assert _ddp007_rows(lint, body) == [_row_of(body, "print(self.meter.log(loss))")]


def test_rank_zero_call_of_a_method_without_collective_on_an_object_kept_on_self_is_quiet(lint):
    body = """
class Trainer:
    def __init__(self, rank):
        self.rank = rank
        self.meter = Meter()

    def step(self, loss):
        if self.rank == 0:
            self.meter.show(loss)
"""
    assert _ddp007_rows(lint, body) == []


def test_collective_method_of_an_object_kept_on_self_called_on_every_rank_is_quiet(lint):
    body = """
class Trainer:
    def __init__(self, rank):
        self.rank = rank
        self.meter = Meter()

    def step(self, loss):
        value = self.meter.log(loss)
        if self.rank == 0:
            print(value)
"""
    assert _ddp007_rows(lint, body) == []
