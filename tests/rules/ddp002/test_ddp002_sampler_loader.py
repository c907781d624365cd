"""DDP002 on sampler and loader shapes that used to go unreported: the value given to `set_epoch`,
`.epoch = ...` assignments, samplers rebuilt every epoch, endless generators re-iterating the loader
and samplers built by a helper of another module. Each shape is flagged, and its look-alike left
alone, by what the code does when it runs. Snippets are our own."""

from __future__ import annotations

import textwrap

import pytest

from ddplint.api import lint_paths
from ddplint.cli import main
from ddplint.rules import select_rules
from rule_snippets import findings_every_way, sampler_findings


def sampler_rows(body: str, code: str) -> list[int]:
    return [d.location.row for d in sampler_findings(body, code)]


# -- set_epoch(<a variable nothing in the epoch loop changes>) -------------------------------


def test_set_epoch_with_a_step_counter_that_never_moves():
    found = sampler_findings(
        """
        sampler = DistributedSampler(train_set)
        loader = DataLoader(train_set, batch_size=32, sampler=sampler)
        global_step = 0
        for epoch in range(10):
            sampler.set_epoch(global_step)
            for x, y in loader:
                model(x).sum().backward()
                optimizer.step()
        """,
        "DDP002",
    )
    assert [d.location.row for d in found] == [10]
    assert "nothing in the loop changes `global_step`" in found[0].explanation
    assert found[0].fix is not None and found[0].fix.applicability.value == "unsafe"


def test_set_epoch_with_a_counter_advanced_only_after_the_epoch_loop():
    assert sampler_rows(
        """
        def train(model, loader, sampler, start):
            step = start
            for epoch in range(10):
                sampler.set_epoch(step)
                for batch in loader:
                    model(batch).sum().backward()
            step += 10
            return step

        sampler = DistributedSampler(train_set)
        train(model, DataLoader(train_set, sampler=sampler), sampler, 0)
        """,
        "DDP002",
    ) == [9]


@pytest.mark.parametrize(
    "advance",
    [
        "for x, y in loader:\n        model(x).sum().backward()\n        global_step += 1",
        "for x, y in loader:\n        model(x).sum().backward()\n    global_step = global_step + len(loader)",
        "for global_step, (x, y) in enumerate(loader, global_step):\n        model(x).sum().backward()",
    ],
    ids=["step-in-inner-loop", "counter-at-end-of-epoch", "enumerate-target"],
)
def test_set_epoch_with_a_counter_the_loop_advances_is_left_alone(advance):
    body = (
        "sampler = DistributedSampler(train_set)\n"
        "loader = DataLoader(train_set, batch_size=32, sampler=sampler)\n"
        "global_step = 0\n"
        "for epoch in range(10):\n"
        "    sampler.set_epoch(global_step)\n"
        f"    {advance}\n"
    )
    assert sampler_rows(body, "DDP002") == []


def test_set_epoch_inside_a_phase_loop_of_the_epoch_loop_is_left_alone():
    # `epoch` does not change between the phases, but it does between epochs.
    assert sampler_rows(
        """
        sampler = DistributedSampler(train_set)
        loaders = {"train": DataLoader(train_set, sampler=sampler), "val": DataLoader(val_set)}
        for epoch in range(10):
            for phase in ("train", "val"):
                sampler.set_epoch(epoch)
                for x, y in loaders[phase]:
                    model(x).sum().backward()
        """,
        "DDP002",
    ) == []


def test_set_epoch_in_a_loop_of_a_helper_called_each_epoch_is_left_alone():
    # The helper's own loop is not the epoch loop: its `epoch` parameter changes from call to call.
    assert sampler_rows(
        """
        def set_epochs(samplers, epoch):
            for each in samplers:
                each.set_epoch(epoch)

        sampler = DistributedSampler(train_set)
        loader = DataLoader(train_set, sampler=sampler)
        for epoch in range(10):
            set_epochs([sampler], epoch)
            for x, y in loader:
                model(x).sum().backward()
        """,
        "DDP002",
    ) == []


def test_set_epoch_with_a_global_another_function_advances_is_left_alone():
    assert sampler_rows(
        """
        epochs_done = 0

        def finish_epoch():
            global epochs_done
            epochs_done += 1

        sampler = DistributedSampler(train_set)
        loader = DataLoader(train_set, sampler=sampler)
        for _ in range(10):
            sampler.set_epoch(epochs_done)
            for x, y in loader:
                model(x).sum().backward()
            finish_epoch()
        """,
        "DDP002",
    ) == []


# -- `.epoch = ...` assignments ---------------------------------------------------------------


def test_epoch_set_on_the_dataloader_does_nothing():
    found = sampler_findings(
        """
        sampler = DistributedSampler(train_set)
        loader = DataLoader(train_set, batch_size=32, sampler=sampler)
        for epoch in range(10):
            loader.epoch = epoch
            for x, y in loader:
                model(x).sum().backward()
        """,
        "DDP002",
    )
    assert [d.location.row for d in found] == [9]
    assert found[0].message == "`loader.epoch = epoch` sets the epoch on the DataLoader, not its sampler"
    assert "call sampler.set_epoch(epoch)" in found[0].explanation  # the sampler variable there is


@pytest.mark.parametrize("target", ["sampler.epoch", "loader.sampler.epoch"])
def test_epoch_set_on_the_sampler_is_what_set_epoch_does(target):
    assert sampler_rows(
        f"""
        sampler = DistributedSampler(train_set)
        loader = DataLoader(train_set, batch_size=32, sampler=sampler)
        for epoch in range(10):
            {target} = epoch
            for x, y in loader:
                model(x).sum().backward()
        """,
        "DDP002",
    ) == []


def test_epoch_set_on_a_trainers_sampler_attribute_is_what_set_epoch_does():
    assert sampler_rows(
        """
        class Trainer:
            def __init__(self, dataset):
                self.sampler = DistributedSampler(dataset)
                self.loader = DataLoader(dataset, batch_size=32, sampler=self.sampler)

            def fit(self, model):
                for epoch in range(10):
                    self.sampler.epoch = epoch
                    for x, y in self.loader:
                        model(x).sum().backward()

        Trainer(train_set).fit(model)
        """,
        "DDP002",
    ) == []


def test_an_unrelated_epoch_attribute_does_not_count_as_set_epoch():
    assert sampler_rows(
        """
        sampler = DistributedSampler(train_set)
        loader = DataLoader(train_set, batch_size=32, sampler=sampler)
        for epoch in range(10):
            state.epoch = epoch
            for x, y in loader:
                model(x).sum().backward()
        """,
        "DDP002",
    ) == [9]


# -- a DistributedSampler built anew on every pass of the epoch loop --------------------------


def test_a_sampler_rebuilt_every_epoch_starts_at_epoch_zero():
    found = sampler_findings(
        """
        for epoch in range(10):
            sampler = DistributedSampler(train_set)
            loader = DataLoader(train_set, batch_size=32, sampler=sampler)
            for x, y in loader:
                model(x).sum().backward()
        """,
        "DDP002",
    )
    assert [d.location.row for d in found] == [7]
    assert "builds a new shuffling DistributedSampler on every pass" in found[0].explanation
    assert found[0].fix is None  # the first statement of the loop would reach last epoch's sampler


@pytest.mark.parametrize("set_epoch", [False, True], ids=["flagged", "set_epoch-on-the-new-one"])
def test_a_sampler_rebuilt_every_epoch_by_a_helper_of_the_file(set_epoch):
    epoch_line = "    loader.sampler.set_epoch(epoch)\n" if set_epoch else ""
    body = (
        "def build_loader(dataset):\n"
        "    return DataLoader(dataset, batch_size=32, sampler=DistributedSampler(dataset))\n"
        "\n"
        "for epoch in range(10):\n"
        "    loader = build_loader(train_set)\n"
        f"{epoch_line}"
        "    for x, y in loader:\n"
        "        model(x).sum().backward()\n"
    )
    found = sampler_findings(body, "DDP002")
    if set_epoch:
        assert found == []
    else:
        assert [d.location.row for d in found] == [9]
        assert "builds a new shuffling DistributedSampler on every pass" in found[0].explanation


@pytest.mark.parametrize(
    "sampler_lines",
    [
        "sampler = DistributedSampler(train_set)\n    sampler.set_epoch(epoch)",
        "sampler = DistributedSampler(train_set, shuffle=False)",
    ],
    ids=["set_epoch-on-the-new-one", "no-shuffle"],
)
def test_a_rebuilt_sampler_given_its_epoch_or_not_shuffling_is_left_alone(sampler_lines):
    body = (
        "for epoch in range(10):\n"
        f"    {sampler_lines}\n"
        "    loader = DataLoader(train_set, batch_size=32, sampler=sampler)\n"
        "    for x, y in loader:\n"
        "        model(x).sum().backward()\n"
    )
    assert sampler_rows(body, "DDP002") == []


# -- an endless generator re-iterating the loader ---------------------------------------------


def test_yield_from_the_loader_in_an_endless_loop():
    found = sampler_findings(
        """
        def batches_forever(loader):
            while True:
                yield from loader

        sampler = DistributedSampler(train_set)
        batches = batches_forever(DataLoader(train_set, batch_size=32, sampler=sampler))
        for step in range(10_000):
            x, y = next(batches)
            model(x).sum().backward()
        """,
        "DDP002",
    )
    assert [d.location.row for d in found] == [8]


def test_yield_from_with_set_epoch_in_the_generator_loop_is_left_alone():
    assert sampler_rows(
        """
        def batches_forever(loader):
            passes = 0
            while True:
                loader.sampler.set_epoch(passes)
                yield from loader
                passes += 1

        batches = batches_forever(DataLoader(train_set, sampler=DistributedSampler(train_set)))
        for step in range(10_000):
            x, y = next(batches)
            model(x).sum().backward()
        """,
        "DDP002",
    ) == []


GENERATOR_TRAIN = """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler
from streams import endless

dist.init_process_group("nccl")
sampler = DistributedSampler(train_set)
train_loader = DataLoader(train_set, batch_size=32, sampler=sampler)
batches = endless(train_loader)
for step in range(10_000):
    x, y = next(batches)
    model(x).sum().backward()
    optimizer.step()
"""


@pytest.mark.parametrize(
    "generator",
    [
        "def endless(loader):\n    while True:\n        yield from loader\n",
        "def endless(loader):\n    while True:\n        for batch in loader:\n            yield batch\n",
    ],
    ids=["yield-from", "for-yield"],
)
def test_a_generator_of_another_module_restarts_the_passes(tmp_path, monkeypatch, capsys, generator):
    found = findings_every_way(tmp_path, monkeypatch, capsys, {"streams.py": generator, "train.py": GENERATOR_TRAIN})
    assert [(row, code) for row, code, _ in found] == [(8, "DDP002")]
    assert found[0][2] == "each new pass over `train_loader` replays the same order: no set_epoch()"
    [diagnostic] = [d for d in lint_paths(["."], select_rules(["DDP002"])) if d.filename.endswith("train.py")]
    assert "streams.py:2" in diagnostic.explanation and "`endless(train_loader)`" in diagnostic.explanation


def test_a_generator_of_another_module_that_sets_the_epoch(tmp_path, monkeypatch, capsys):
    generator = """\
        def endless(loader):
            done = 0
            while True:
                loader.sampler.set_epoch(done)
                yield from loader
                done += 1
        """
    assert findings_every_way(tmp_path, monkeypatch, capsys, {"streams.py": generator, "train.py": GENERATOR_TRAIN}) == []


# -- a sampler built by a helper of another module ---------------------------------------------

KWARGS_HELPER = """\
    from torch.utils.data import DistributedSampler


    def get_dataloader_kwargs(dataset, batch_size):
        return {"sampler": DistributedSampler(dataset), "batch_size": batch_size, "num_workers": 4}
    """
SAMPLER_HELPER = """\
    from torch.utils.data import DistributedSampler


    def make_sampler(dataset):
        return DistributedSampler(dataset, shuffle=True, drop_last=True)
    """


def _train(uses: str, sets_epoch: bool) -> str:
    epoch_line = "        loader.sampler.set_epoch(epoch)\n" if sets_epoch else ""
    return (
        "import torch.distributed as dist\n"
        "from torch.utils.data import DataLoader\n"
        f"{uses}\n"
        "\n"
        "def main():\n"
        '    dist.init_process_group("nccl")\n'
        "    loader = LOADER\n"
        "    for epoch in range(10):\n"
        f"{epoch_line}"
        "        for x, y in loader:\n"
        "            model(x).sum().backward()\n"
        "            optimizer.step()\n"
    )


HELPERS = {
    "kwargs": (KWARGS_HELPER, "from data import get_dataloader_kwargs", "DataLoader(train_set, **get_dataloader_kwargs(train_set, 32))"),
    "sampler": (SAMPLER_HELPER, "from data import make_sampler", "DataLoader(train_set, batch_size=32, sampler=make_sampler(train_set))"),
}


@pytest.mark.parametrize("helper", sorted(HELPERS))
def test_a_helper_built_sampler_needs_set_epoch(tmp_path, monkeypatch, capsys, helper):
    module, uses, loader = HELPERS[helper]
    train = _train(uses, sets_epoch=False).replace("LOADER", loader)
    found = findings_every_way(tmp_path, monkeypatch, capsys, {"data.py": module, "train.py": train})
    assert [(row, code) for row, code, _ in found] == [(8, "DDP002")]  # and no DDP001: the sampler is seen


@pytest.mark.parametrize("helper", sorted(HELPERS))
def test_a_helper_built_sampler_given_its_epoch(tmp_path, monkeypatch, capsys, helper):
    module, uses, loader = HELPERS[helper]
    train = _train(uses, sets_epoch=True).replace("LOADER", loader)
    assert findings_every_way(tmp_path, monkeypatch, capsys, {"data.py": module, "train.py": train}) == []


@pytest.mark.parametrize("helper", ["kwargs", "loader-factory"])
def test_the_fix_sets_the_epoch_on_the_loaders_sampler(tmp_path, monkeypatch, capsys, helper):
    """A sampler inside a helper's result is reached as `loader.sampler`: a DataLoader has no
    set_epoch of its own, so the fix must not call `loader.set_epoch`."""
    if helper == "kwargs":
        module, uses, loader = HELPERS["kwargs"]
    else:
        module = "from torch.utils.data import DataLoader, DistributedSampler\n\n\ndef build(ds):\n    return DataLoader(ds, sampler=DistributedSampler(ds))\n"
        uses, loader = "from data import build", "build(train_set)"
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "data.py").write_text(textwrap.dedent(module))
    (tmp_path / "train.py").write_text(_train(uses, sets_epoch=False).replace("LOADER", loader))
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    assert main(["--no-cache", "--select", "DDP002", "--diff", "train.py"]) == 1
    added = [line for line in capsys.readouterr().out.splitlines() if line.startswith("+ ")]
    assert added == ["+        loader.sampler.set_epoch(epoch)"]


def test_a_comprehension_over_a_parameter_inside_a_generator_loop(tmp_path, monkeypatch, capsys):
    """A comprehension is a loop without a body of statements: summarising the module that holds
    it must not fail (it stopped whole runs with an internal error)."""
    generator = """\
        def windows(items, size):
            while True:
                yield [item for item in items][:size]
        """
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "streams.py").write_text(textwrap.dedent(generator))
    (tmp_path / "train.py").write_text(GENERATOR_TRAIN.replace("from streams import endless", "from streams import windows as endless"))
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    assert main(["--no-cache", "--select", "DDP001,DDP002", "."]) == 0
    assert "internal error" not in capsys.readouterr().err


def test_a_module_with_only_generators_is_parsed_only_for_a_generator(tmp_path, monkeypatch):
    """A module that names nothing else a summary reads (no loader, sampler, process group) is
    summarised only when a file calls one of its generator functions: the other helpers of a
    utilities module cost no parse."""
    from ddplint.analysis import project as project_module
    from ddplint.analysis import summaries
    from ddplint.engine import parses_safely

    utils = tmp_path / "utils.py"
    utils.write_text(
        "def endless(loader):\n    while True:\n        yield from loader\n\n\n"
        "def average(values):\n    return sum(values) / len(values)\n"
    )
    (tmp_path / "train.py").write_text("from utils import average, endless\n")
    parsed: list[bytes] = []
    real = summaries.facts_of
    monkeypatch.setattr(summaries, "facts_of", lambda data: parsed.append(data) or real(data))

    index = project_module.ProjectIndex([str(utils), str(tmp_path / "train.py")], parses_safely)
    assert not index.summary_for(str(utils), "average").offers_anything()
    assert parsed == []
    repeater = index.summary_for(str(utils), "endless").pass_repeaters["endless"]
    assert (repeater.parameter, repeater.position, repeater.sets_epoch) == ("loader", 0, False)
    assert len(parsed) == 1
