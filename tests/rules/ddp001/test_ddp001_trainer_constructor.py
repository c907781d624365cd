"""DDP001 for a loader handed to the constructor of a class of another module that keeps it on
the instance (`runner = Runner(model, optimizer, loader)`), when a method later called on that
instance (`runner.go(20)`) trains on the attribute. The loader is neither shuffled nor named for
training: what the class does with it decides. Same answer however ddplint is run."""

from __future__ import annotations

from rule_snippets import findings_every_way

SCRIPT = """\
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader
from runner import Runner

{start}
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = DataLoader(dataset, batch_size=16{sampler})
runner = Runner(model, optimizer, loader)
{call}
"""

RUNNER = """\
import torch


class Runner:
    def __init__(self, model, optimizer, batches):
        self.model = model
        self.optimizer = optimizer
        self.batches = batches

    def go(self, epochs):
        for epoch in range(epochs):
            for x, y in self.batches:
                self.optimizer.zero_grad()
                self.model(x).sub(y).pow(2).mean().backward()
                self.optimizer.step()

    def score(self):
        total = 0.0
        with torch.no_grad():
            for x, y in self.batches:
                total += float(self.model(x).sub(y).abs().sum())
        return total
"""


def _rows(tmp_path, monkeypatch, capsys, call="runner.go(20)", start='dist.init_process_group("nccl")', sampler=""):
    files = {"runner.py": RUNNER, "train.py": SCRIPT.format(start=start, call=call, sampler=sampler)}
    found = findings_every_way(tmp_path, monkeypatch, capsys, files)
    return [(row, code) for row, code, _ in found if code == "DDP001"]  # DDP002 is judged on its own page


def test_a_loader_kept_by_a_runner_whose_method_trains_on_it(tmp_path, monkeypatch, capsys):
    assert _rows(tmp_path, monkeypatch, capsys) == [(8, "DDP001")]


def test_left_alone_when_only_an_evaluating_method_is_called(tmp_path, monkeypatch, capsys):
    assert _rows(tmp_path, monkeypatch, capsys, call="print(runner.score())") == []


def test_left_alone_with_a_distributed_sampler(tmp_path, monkeypatch, capsys):
    sampler = ", sampler=torch.utils.data.DistributedSampler(dataset)"
    assert _rows(tmp_path, monkeypatch, capsys, sampler=sampler) == []


def test_left_alone_in_a_script_that_is_not_distributed(tmp_path, monkeypatch, capsys):
    assert _rows(tmp_path, monkeypatch, capsys, start="") == []


def test_only_the_stored_loader_the_method_trains_on_is_reported(tmp_path, monkeypatch, capsys):
    # Handed over by keyword, beside a second loader the class only scores: that one is left alone.
    runner = RUNNER.replace("def __init__(self, model, optimizer, batches):", "def __init__(self, model, optimizer, batches, held_out):")
    runner = runner.replace("        self.batches = batches\n", "        self.batches = batches\n        self.held_out = held_out\n")
    runner = runner.replace("for x, y in self.batches:\n                total", "for x, y in self.held_out:\n                total")
    script = SCRIPT.format(start='dist.init_process_group("nccl")', sampler="", call="runner.go(20)\nprint(runner.score())").replace(
        "runner = Runner(model, optimizer, loader)",
        "other = DataLoader(dataset, batch_size=16)\nrunner = Runner(model, optimizer, held_out=other, batches=loader)",
    )
    found = findings_every_way(tmp_path, monkeypatch, capsys, {"runner.py": runner, "train.py": script})
    assert [(row, code) for row, code, _ in found] == [(8, "DDP001")]
