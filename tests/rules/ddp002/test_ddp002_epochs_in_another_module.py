"""DDP002 when the epoch loop lives in another module: the script builds the loader and its
shuffling DistributedSampler, then hands the loader to a function or to a method of a trainer
class of the project that runs every epoch itself. The finding sits on the call in the script,
the same however ddplint is run (folder, file, stdin)."""

from __future__ import annotations

from rule_snippets import findings_every_way

SCRIPT = """\
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler
from {module} import {name}

dist.init_process_group("nccl")
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = DataLoader(dataset, batch_size=16, sampler=DistributedSampler(dataset))
{call}
"""

EPOCH_FUNCTION = """\
def run_epochs(model, optimizer, batches, epochs):
    for epoch in range(epochs):
        for x, y in batches:
            optimizer.zero_grad()
            model(x).sub(y).pow(2).mean().backward()
            optimizer.step()
"""

TRAINER_CLASS = """\
class Trainer:
    def __init__(self, model, optimizer, epochs):
        self.model, self.optimizer, self.epochs = model, optimizer, epochs

    def go(self, batches):
        for epoch in range(self.epochs):
{set_epoch}            for step, (x, y) in enumerate(batches):
                self.optimizer.zero_grad()
                self.model(x).sub(y).pow(2).mean().backward()
                self.optimizer.step()
"""


def _script(module: str, name: str, call: str) -> str:
    return SCRIPT.format(module=module, name=name, call=call)


def test_a_function_of_another_module_that_runs_the_epochs(tmp_path, monkeypatch, capsys):
    found = findings_every_way(tmp_path, monkeypatch, capsys, {
        "loops.py": EPOCH_FUNCTION,
        "train.py": _script("loops", "run_epochs", "run_epochs(model, optimizer, loader, 20)"),
    })
    assert [(row, code) for row, code, _ in found] == [(9, "DDP002")]
    assert "`run_epochs(...)` runs its epochs over `loader`" in found[0][2]


def test_a_method_of_a_trainer_built_in_the_script(tmp_path, monkeypatch, capsys):
    calls = (
        ("trainer = Trainer(model, optimizer, 20)\ntrainer.go(loader)", 10),
        ("Trainer(model, optimizer, 20).go(loader)", 9),
    )
    for index, (call, row) in enumerate(calls):
        root = tmp_path / str(index)
        root.mkdir()
        found = findings_every_way(root, monkeypatch, capsys, {
            "trainer.py": TRAINER_CLASS.format(set_epoch=""),
            "train.py": _script("trainer", "Trainer", call),
        })
        assert [(r, code) for r, code, _ in found] == [(row, "DDP002")]


def test_left_alone_when_the_method_sets_the_epoch_in_its_loop(tmp_path, monkeypatch, capsys):
    found = findings_every_way(tmp_path, monkeypatch, capsys, {
        "trainer.py": TRAINER_CLASS.format(set_epoch="            batches.sampler.set_epoch(epoch)\n"),
        "train.py": _script("trainer", "Trainer", "Trainer(model, optimizer, 20).go(loader)"),
    })
    assert found == []


def test_left_alone_when_the_callee_only_evaluates(tmp_path, monkeypatch, capsys):
    # No backward(), no optimizer step: the order a rank scores its samples in changes nothing.
    scorer = """\
import torch

def score(model, batches, repeats):
    for _ in range(repeats):
        with torch.no_grad():
            for x, y in batches:
                print(model(x).sub(y).abs().mean())
"""
    found = findings_every_way(tmp_path, monkeypatch, capsys, {
        "scoring.py": scorer,
        "train.py": _script("scoring", "score", "score(model, loader, 3)"),
    })
    assert found == []


def test_left_alone_when_the_callee_runs_one_epoch(tmp_path, monkeypatch, capsys):
    one_pass = EPOCH_FUNCTION.replace("range(epochs)", "range(1)")
    found = findings_every_way(tmp_path, monkeypatch, capsys, {
        "loops.py": one_pass,
        "train.py": _script("loops", "run_epochs", "run_epochs(model, optimizer, loader, 20)"),
    })
    assert found == []


def test_left_alone_when_the_script_hands_the_sampler_over_too(tmp_path, monkeypatch, capsys):
    # The callee sets the epoch on the sampler it is given: set_epoch reaches it.
    with_sampler = """\
def run_epochs(model, optimizer, batches, sampler, epochs):
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in batches:
            optimizer.zero_grad()
            model(x).sub(y).pow(2).mean().backward()
            optimizer.step()
"""
    script = SCRIPT.replace(
        "loader = DataLoader(dataset, batch_size=16, sampler=DistributedSampler(dataset))",
        "sampler = DistributedSampler(dataset)\nloader = DataLoader(dataset, batch_size=16, sampler=sampler)",
    )
    found = findings_every_way(tmp_path, monkeypatch, capsys, {
        "loops.py": with_sampler,
        "train.py": script.format(module="loops", name="run_epochs", call="run_epochs(model, optimizer, loader, sampler, 20)"),
    })
    assert found == []


def test_left_alone_when_a_helper_of_the_trainer_sets_the_epoch(tmp_path, monkeypatch, capsys):
    # The epoch is set one call away from the loop: counted, the rule prefers silence to guessing.
    trainer = TRAINER_CLASS.format(set_epoch="            self._begin(batches, epoch)\n") + """
    def _begin(self, batches, epoch):
        batches.sampler.set_epoch(epoch)
"""
    found = findings_every_way(tmp_path, monkeypatch, capsys, {
        "trainer.py": trainer,
        "train.py": _script("trainer", "Trainer", "Trainer(model, optimizer, 20).go(loader)"),
    })
    assert found == []


# -- a helper of data.py builds the sampler and the loader; the epoch loop is in the script's main()

DATA_HELPER = """\
from torch.utils.data import DataLoader, DistributedSampler


def make_loader(dataset, batch_size):
    sampler = DistributedSampler(dataset)
    return DataLoader(dataset, batch_size=batch_size, sampler=sampler), sampler
"""

ENTRY = """\
import torch.distributed as dist
from data import make_loader


def main():
    dist.init_process_group("nccl")
    loader, sampler = make_loader(build_dataset(), 32)
    for epoch in range(10):
{set_epoch}        for x, y in loader:
            opt.zero_grad()
            model(x).sum().backward()
            opt.step()
"""


def test_a_sampler_from_a_data_helper_with_the_epoch_loop_in_main(tmp_path, monkeypatch, capsys):
    found = findings_every_way(tmp_path, monkeypatch, capsys, {"data.py": DATA_HELPER, "train.py": ENTRY.format(set_epoch="")})
    assert [(row, code) for row, code, _ in found] == [(8, "DDP002")]


def test_a_sampler_from_a_data_helper_given_its_epoch_is_left_alone(tmp_path, monkeypatch, capsys):
    for index, call in enumerate(("sampler.set_epoch(epoch)", "loader.sampler.set_epoch(epoch)")):
        root = tmp_path / str(index)
        root.mkdir()
        files = {"data.py": DATA_HELPER, "train.py": ENTRY.format(set_epoch=f"        {call}\n")}
        assert findings_every_way(root, monkeypatch, capsys, files) == []
