"""DDP001 for a loader that is neither shuffled nor named for training, and is trained on in
another module of the project: handed to a function there (`train_one_epoch(model, loader)` of an
engine module, or one with a neutral name) or to a method of a trainer class built in the script.
What the callee does with its parameter decides, not its name."""

from __future__ import annotations

from rule_snippets import findings_every_way

SCRIPT = """\
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader
from {module} import {name}

dist.init_process_group("nccl")
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = DataLoader(dataset, batch_size=16)
{call}
"""

ENGINE = """\
def train_one_epoch(model, optimizer, batches):
    for x, y in batches:
        optimizer.zero_grad()
        model(x).sub(y).pow(2).mean().backward()
        optimizer.step()
"""

TRAINER = """\
import torch


class Runner:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer

    def go(self, batches, epochs):
        for epoch in range(epochs):
            for x, y in batches:
                self.optimizer.zero_grad()
                self.model(x).sub(y).pow(2).mean().backward()
                self.optimizer.step()

    def score(self, batches):
        with torch.no_grad():
            return sum(self.model(x).sub(y).abs().sum() for x, y in batches)
"""


def _rows(tmp_path, monkeypatch, capsys, files) -> list[tuple[int, str]]:
    return [(row, code) for row, code, _ in findings_every_way(tmp_path, monkeypatch, capsys, files)]


def test_handed_to_an_engine_function_that_trains_on_it(tmp_path, monkeypatch, capsys):
    files = {"engine.py": ENGINE, "train.py": SCRIPT.format(
        module="engine", name="train_one_epoch",
        call="for epoch in range(10):\n    train_one_epoch(model, optimizer, loader)",
    )}
    assert _rows(tmp_path, monkeypatch, capsys, files) == [(8, "DDP001")]


def test_handed_to_a_method_of_a_trainer_class_of_another_module(tmp_path, monkeypatch, capsys):
    files = {"runner.py": TRAINER, "train.py": SCRIPT.format(
        module="runner", name="Runner", call="runner = Runner(model, optimizer)\nrunner.go(loader, 10)",
    )}
    assert _rows(tmp_path, monkeypatch, capsys, files) == [(8, "DDP001")]


def test_left_alone_when_the_method_only_scores_it(tmp_path, monkeypatch, capsys):
    # Evaluation on every rank: redundant work, not wrong results (the rule's silent case).
    files = {"runner.py": TRAINER, "train.py": SCRIPT.format(
        module="runner", name="Runner", call="print(Runner(model, optimizer).score(loader))",
    )}
    assert _rows(tmp_path, monkeypatch, capsys, files) == []


def test_left_alone_when_the_function_never_steps_the_model(tmp_path, monkeypatch, capsys):
    counter = """\
def count(batches):
    total = 0
    for x, y in batches:
        total += len(x)
    return total
"""
    files = {"stats.py": counter, "train.py": SCRIPT.format(module="stats", name="count", call="print(count(loader))")}
    assert _rows(tmp_path, monkeypatch, capsys, files) == []
