"""DDP002 on a loader a method hands out: a dataset class whose method builds a DataLoader over a
shuffling DistributedSampler and returns it, called by a trainer through an object whose class is
known only at run time. Nothing in the project ever sets an epoch, so every pass (and every loader
the method builds again for the next phase) has the same order. Each case is a small project."""

from __future__ import annotations

from project_support import project_findings

# The library module: the DataLoader is on line 12.
SHARDED_SET = """\
import torch.distributed as dist
from torch.utils.data import DataLoader, Dataset, DistributedSampler


class ShardedSet(Dataset):
    def __init__(self, items, shuffle):
        self.items = items
        self.shuffle = shuffle

    def {method}(self, batch_size):
        sampler = DistributedSampler(self, shuffle={shuffle})
        return DataLoader(self, batch_size=batch_size, sampler=sampler)

    def __len__(self):
        return len(self.items)

    def __getitem__(self, index):
        return self.items[index]
"""

# The trainer: it reaches the method through a dict of datasets, so which class is known only at
# run time, and asks for a new loader every phase.
PHASED_TRAINER = """\
import torch.distributed as dist
{imports}

class Runner:
    def __init__(self, sets, model, optimizer):
        self.sets = sets
        self.model = model
        self.optimizer = optimizer

    def run(self, phases):
        dist.init_process_group("nccl")
        for phase in range(phases):
            loader = self.sets["train"].{method}(32)
            {per_phase}
            for x, y in loader:
                self.model(x).sub(y).pow(2).mean().backward()
                self.optimizer.step()
"""


def _project(tmp_path, shuffle="self.shuffle", imports="", per_phase="pass", method="batches"):
    files = {
        "lib/sets.py": SHARDED_SET.format(shuffle=shuffle, method=method),
        "lib/__init__.py": "",
        "runner.py": PHASED_TRAINER.format(imports=imports, per_phase=per_phase, method=method),
    }
    return project_findings(tmp_path, files, ["DDP002"])


def test_method_returning_a_loader_whose_epoch_nothing_sets_is_reported_where_it_is_built(tmp_path):
    assert _project(tmp_path) == [("lib/sets.py", 12)]


def test_left_alone_when_the_trainer_sets_the_epoch_through_the_loader(tmp_path):
    assert _project(tmp_path, per_phase="loader.sampler.set_epoch(phase)") == []


def test_left_alone_when_the_trainer_sets_the_epoch_attribute_of_the_sampler(tmp_path):
    assert _project(tmp_path, per_phase="loader.sampler.epoch = phase") == []


def test_left_alone_when_the_method_is_named_for_evaluation(tmp_path):
    # The order in which a rank evaluates its share does not change any result.
    assert _project(tmp_path, method="validation_batches") == []


def test_left_alone_when_the_sampler_does_not_shuffle(tmp_path):
    assert _project(tmp_path, shuffle="False") == []


def test_left_alone_when_the_project_trains_with_a_framework_that_sets_the_epoch(tmp_path):
    # Lightning's fit loop sets the epoch of the sampler of each loader it is handed.
    assert _project(tmp_path, imports="import lightning") == []


def test_top_level_factory_is_judged_in_the_module_that_iterates_it(tmp_path):
    factory = """\
        import torch.distributed as dist
        from torch.utils.data import DataLoader, DistributedSampler


        def batches(dataset):
            return DataLoader(dataset, batch_size=32, sampler=DistributedSampler(dataset))
        """
    train = """\
        import torch.distributed as dist
        from data import batches

        dist.init_process_group("nccl")
        loader = batches(train_set)
        for epoch in range(10):
            for x in loader:
                model(x).backward()
                optimizer.step()
        """
    found = project_findings(tmp_path, {"data.py": factory, "train.py": train}, ["DDP002"])
    assert [path for path, _ in found] == ["train.py"]


def test_a_cached_result_is_dropped_when_another_module_starts_setting_the_epoch(tmp_path):
    # The library module's finding rests on every other module's text: an edit to the trainer
    # alone must reach it on the next run over a warm cache.
    from ddplint.api import lint_paths
    from ddplint.cache import ResultCache
    from ddplint.rules import select_rules

    root = tmp_path / "project"
    root.mkdir()
    assert _project(root) == [("lib/sets.py", 12)]

    def cached_run() -> list[int]:
        cache = ResultCache(tmp_path / "cache", "DDP002")
        rows = [d.location.row for d in lint_paths([str(root)], select_rules(["DDP002"]), jobs=1, cache=cache)]
        cache.save()
        return rows

    assert cached_run() == [12]
    trainer = root / "runner.py"
    trainer.write_text(trainer.read_text().replace("            pass\n", "            loader.sampler.set_epoch(phase)\n"))
    assert cached_run() == []


# A script that builds the dataset class itself and runs its epochs over the method's loader:
# the analysis follows `ShardedSet(...).batches(...)` into the library, so the epoch loop below
# (line 8) is where the missing set_epoch is reported, with its fix.
SEEN_CALLER = """\
import torch.distributed as dist
from lib.sets import ShardedSet

dist.init_process_group("nccl")
loader = ShardedSet(items, shuffle=True).batches(32)
for x in loader:
    warm_up(x)
for epoch in range(10):
    for x, y in loader:
        model(x).sub(y).pow(2).mean().backward()
        optimizer.step()
"""


def _seen_caller_project(tmp_path, script=SEEN_CALLER):
    files = {
        "lib/sets.py": SHARDED_SET.format(shuffle="self.shuffle", method="batches"),
        "lib/__init__.py": "",
        "train.py": script,
    }
    return project_findings(tmp_path, files, ["DDP002"])


def test_a_caller_seen_running_epochs_gets_the_one_finding(tmp_path):
    # Not also at the library's DataLoader: one bug, one finding, where the fix goes.
    assert _seen_caller_project(tmp_path) == [("train.py", 8)]


def test_the_library_alone_agrees_with_the_whole_project_run(tmp_path):
    # `ddplint lib/sets.py` (a pre-commit run on the edited file) sees the same project.
    from ddplint.api import lint_paths
    from ddplint.rules import select_rules

    _seen_caller_project(tmp_path)
    alone = list(lint_paths([str(tmp_path / "lib" / "sets.py")], select_rules(["DDP002"]), jobs=1))
    assert alone == []


def test_a_seen_caller_that_never_repeats_a_pass_leaves_the_finding_at_the_library(tmp_path):
    # One pass in the script, and the trainer reaching the method through a dict elsewhere is
    # not followed: the library's loader is still reported where it is built.
    script = SEEN_CALLER.split("for epoch")[0]
    files = {
        "lib/sets.py": SHARDED_SET.format(shuffle="self.shuffle", method="batches"),
        "lib/__init__.py": "",
        "train.py": script,
        "runner.py": PHASED_TRAINER.format(imports="", per_phase="pass", method="batches"),
    }
    assert project_findings(tmp_path, files, ["DDP002"]) == [("lib/sets.py", 12)]
