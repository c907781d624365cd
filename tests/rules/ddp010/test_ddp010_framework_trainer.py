"""DDP010 in a Lightning Fabric trainer class: the file names no torch.distributed (Fabric's
launcher starts the processes), the rank-0 guard is a property of the class (`@property def
is_leader(self): return self.fabric.global_rank == 0`, read as `self.is_leader`), and the others
wait in a helper method that wraps `self.fabric.barrier()`."""

from __future__ import annotations

TRAINER = """
import torch
from lightning import Fabric


class Trainer:
    def __init__(self, model, optimizer, train_loader, valid_loader, valid_every=100):
        self.fabric = Fabric(accelerator="cuda", devices=8, strategy="ddp")
        self.fabric.launch()
        self.model, self.optimizer = self.fabric.setup(model, optimizer)
        self.train_loader = self.fabric.setup_dataloaders(train_loader)
        self.valid_loader = valid_loader
        self.valid_every = valid_every

    @property
    def is_leader(self):
        return {leader_test}

    def sync(self):
        self.fabric.barrier()

    def __call__(self, steps):
        step = 0
        for batch in self.train_loader:
            loss = self.model(batch).mean()
            self.fabric.backward(loss)
            self.optimizer.step()
            self.optimizer.zero_grad()
            step += 1
            if self.is_leader and step % self.valid_every == 0:
                total = 0.0
                with torch.no_grad():
                    for valid_batch in self.valid_loader:
                        total += self.model.module(valid_batch).mean().item()
                self.fabric.print(f"valid loss {total:.3f}")
            self.sync()
            if step == steps:
                break
"""


def _ddp010_rows(lint, source: str) -> list[int]:
    return [row for row, code in lint(source) if code == "DDP010"]


def _row_of(source: str, text: str) -> int:
    lines = source.lstrip("\n").splitlines()
    return next(number for number, line in enumerate(lines, 1) if text in line)


def test_validation_under_a_rank_zero_property_of_a_fabric_trainer_is_flagged(lint):
    source = TRAINER.replace("{leader_test}", "self.fabric.global_rank == 0")
    assert _ddp010_rows(lint, source) == [_row_of(source, "if self.is_leader and")]


def test_a_property_that_is_no_rank_test_is_no_rank_guard(lint):
    # the property holds on every rank alike: every rank validates, nobody waits for one
    source = TRAINER.replace("{leader_test}", "self.fabric.world_size > 1")
    assert _ddp010_rows(lint, source) == []


def test_validation_on_every_rank_of_a_fabric_trainer_is_left_alone(lint):
    source = TRAINER.replace("{leader_test}", "self.fabric.global_rank == 0").replace(
        "if self.is_leader and step % self.valid_every == 0:", "if step % self.valid_every == 0:"
    )
    assert _ddp010_rows(lint, source) == []
