"""DDP002 when the script hands its loader to the constructor of a trainer class of another
module (`trainer = Trainer(model, optimizer, loader, 20)`), which keeps it on the instance, and a
method called later (`trainer.fit()`) runs the epochs over that attribute. The finding sits on the
method call in the script, the same however ddplint is run (folder, file, stdin)."""

from __future__ import annotations

from rule_snippets import findings_every_way

SCRIPT = """\
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler
from trainer import Trainer

dist.init_process_group("nccl")
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = DataLoader(dataset, batch_size=16, sampler=DistributedSampler(dataset))
trainer = Trainer(model, optimizer, loader, 20)
{call}
"""

TRAINER_CLASS = """\
class Trainer:
    def __init__(self, model, optimizer, batches, epochs):
        self.model, self.optimizer, self.epochs = model, optimizer, epochs
        self.train_batches = batches

    def fit(self):
        for epoch in range(self.epochs):
{set_epoch}            for step, (x, y) in enumerate(self.train_batches):
                self.optimizer.zero_grad()
                self.model(x).sub(y).pow(2).mean().backward()
                self.optimizer.step()

    def one_epoch(self):
        for x, y in self.train_batches:
            self.optimizer.zero_grad()
            self.model(x).sub(y).pow(2).mean().backward()
            self.optimizer.step()
"""


def _files(set_epoch: str = "", call: str = "trainer.fit()") -> dict[str, str]:
    return {"trainer.py": TRAINER_CLASS.format(set_epoch=set_epoch), "train.py": SCRIPT.format(call=call)}


def test_a_trainer_whose_fit_runs_the_epochs_over_the_stored_loader(tmp_path, monkeypatch, capsys):
    found = findings_every_way(tmp_path, monkeypatch, capsys, _files())
    assert [(row, code) for row, code, _ in found] == [(10, "DDP002")]
    assert "`loader`" in found[0][2]


def test_the_script_loops_over_a_method_that_makes_one_pass(tmp_path, monkeypatch, capsys):
    found = findings_every_way(tmp_path, monkeypatch, capsys, _files(call="for epoch in range(20):\n    trainer.one_epoch()"))
    assert [(row, code) for row, code, _ in found] == [(10, "DDP002")]


def test_left_alone_when_the_class_sets_the_epoch_on_the_stored_loader(tmp_path, monkeypatch, capsys):
    set_epoch = "            self.train_batches.sampler.set_epoch(epoch)\n"
    assert findings_every_way(tmp_path, monkeypatch, capsys, _files(set_epoch=set_epoch)) == []


def test_left_alone_when_no_training_method_is_called(tmp_path, monkeypatch, capsys):
    # Built and never run: nothing iterates the loader.
    assert findings_every_way(tmp_path, monkeypatch, capsys, _files(call="print(trainer)")) == []


def test_left_alone_when_fit_runs_one_epoch(tmp_path, monkeypatch, capsys):
    files = _files()
    files["trainer.py"] = files["trainer.py"].replace("range(self.epochs)", "range(1)")
    assert findings_every_way(tmp_path, monkeypatch, capsys, files) == []


def test_fit_runs_the_epochs_through_a_method_that_makes_one_pass(tmp_path, monkeypatch, capsys):
    # `fit()` never names the loader: its epoch loop calls `self.one_epoch()`, which does.
    files = _files(call="trainer.train()")
    files["trainer.py"] += """
    def train(self):
        for epoch in range(self.epochs):
            self.one_epoch()
"""
    found = findings_every_way(tmp_path, monkeypatch, capsys, files)
    assert [(row, code) for row, code, _ in found] == [(10, "DDP002")]
    assert "`train(...)` runs its epochs over `loader`" in found[0][2]
