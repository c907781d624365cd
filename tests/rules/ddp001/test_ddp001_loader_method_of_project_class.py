"""DDP001: a DataLoader built and returned by a method of a class of another project module, on
an object the distributed script builds (`store = BatchStore(opts)`, then `store.training()`).
The method's module has no distributed code of its own, or hands the dataset in from the object's
constructor: the loader is judged in the script that builds the object and trains on it."""

from __future__ import annotations

import pytest

from rule_snippets import write_files

BATCH_STORE = """
    from torch.utils.data import DataLoader, DistributedSampler
    from records import load_records


    class BatchStore:
        def __init__(self, opts):
            self.opts = opts
            self.rows = load_records(opts.path)

        def training(self):
            {training}

        def checking(self):
            return DataLoader(self.rows, batch_size=self.opts.batch, shuffle=False)
    """

SCRIPT = """
    import torch
    import torch.distributed as dist
    from store import BatchStore

    def main(opts):
        dist.init_process_group("nccl")
        net = torch.nn.parallel.DistributedDataParallel(make_net())
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        {build}
        for epoch in range(opts.epochs):
            {set_epoch}
            for x, y in batches:
                opt.zero_grad()
                loss_of(net(x), y).backward()
                opt.step()
    """

RECORDS = "def load_records(path):\n    return list(open(path))\n"


def _lint(tmp_path, training, build="store = BatchStore(opts)\nbatches = store.training()", set_epoch="pass"):
    from ddplint.api import lint_paths
    from ddplint.rules import RULES_BY_CODE

    script = SCRIPT.replace("{build}", build.replace("\n", "\n        ")).replace("{set_epoch}", set_epoch)
    write_files(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'demo'\n",
            "records.py": RECORDS,
            "store.py": BATCH_STORE.replace("{training}", training),
            "train.py": script,
        },
    )
    rules = [RULES_BY_CODE["DDP001"], RULES_BY_CODE["DDP002"]]
    return sorted((d.filename.rsplit("/", 1)[-1], d.location.row, d.code) for d in lint_paths([str(tmp_path)], rules))


SHUFFLED = "return DataLoader(self.rows, batch_size=self.opts.batch, shuffle=True)"
SHARDED = "return DataLoader(self.rows, batch_size=self.opts.batch, sampler=DistributedSampler(self.rows))"


@pytest.mark.parametrize(
    "build",
    [
        "store = BatchStore(opts)\nbatches = store.training()",
        "batches = BatchStore(opts).training()",
    ],
)
def test_shuffled_loader_from_a_method_of_an_object_the_script_builds_is_flagged(tmp_path, build):
    row = 8 + build.count("\n") + 1  # the line that calls the method
    assert _lint(tmp_path, SHUFFLED, build=build) == [("train.py", row, "DDP001")]


def test_the_message_names_where_the_method_builds_the_loader(tmp_path):
    from ddplint.api import lint_paths
    from ddplint.rules import RULES_BY_CODE

    _lint(tmp_path, SHUFFLED)
    (finding,) = lint_paths([str(tmp_path)], [RULES_BY_CODE["DDP001"]])
    assert "training(...)" in finding.message


def test_sampled_loader_from_such_a_method_is_left_alone(tmp_path):
    assert _lint(tmp_path, SHARDED, set_epoch="batches.sampler.set_epoch(epoch)") == []


def test_evaluation_loader_from_such_a_method_is_left_alone(tmp_path):
    build = "store = BatchStore(opts)\nbatches = store.training()\nheld_out = store.checking()"
    assert _lint(tmp_path, SHARDED, build=build, set_epoch="batches.sampler.set_epoch(epoch)") == []


def test_sampler_from_such_a_method_still_needs_its_epoch(tmp_path):
    """The same method followed for DDP002: its shuffling DistributedSampler never gets set_epoch
    in the script's epoch loop. Reported there only: the class's own module, which judges by
    the whole project when it cannot see its callers, sees this one run the epochs."""
    assert _lint(tmp_path, SHARDED) == [("train.py", 11, "DDP002")]


INVERTED_STORE = """
    from torch.utils.data import DataLoader, DistributedSampler


    class Rows:
        def __init__(self, rows, distributed):
            self.rows = rows
            self.distributed = distributed

        def loader(self, batch):
            order = {choice}
            return DataLoader(self.rows, batch_size=batch, sampler=order, shuffle=order is None)
    """

INVERTED_SCRIPT = """
    import os
    import torch.distributed as dist
    from rows import Rows

    multi = int(os.environ.get("WORLD_SIZE", "1")) > 1
    if multi:
        dist.init_process_group("nccl")
    batches = Rows(read_rows(), multi).loader(32)
    for epoch in range(8):
        if multi:
            batches.sampler.set_epoch(epoch)
        for x in batches:
            step(x).backward()
            opt.step()
    """


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("None if self.distributed else DistributedSampler(self.rows)", [("train.py", 8, "DDP001")]),
        ("DistributedSampler(self.rows) if self.distributed else None", []),
    ],
)
def test_method_whose_dataset_comes_from_the_constructor_is_judged_by_the_builder(tmp_path, choice, expected):
    """The class's module is distributed (it builds a DistributedSampler), but it cannot judge a
    loader over what its constructor is handed; the script that builds the object can."""
    from ddplint.api import lint_paths
    from ddplint.rules import RULES_BY_CODE

    write_files(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'demo'\n",
            "rows.py": INVERTED_STORE.replace("{choice}", choice),
            "train.py": INVERTED_SCRIPT,
        },
    )
    found = lint_paths([str(tmp_path)], [RULES_BY_CODE["DDP001"]])
    assert sorted((d.filename.rsplit("/", 1)[-1], d.location.row, d.code) for d in found) == expected
