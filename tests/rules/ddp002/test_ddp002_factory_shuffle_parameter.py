"""DDP002 on a loader factory whose DistributedSampler shuffles as its caller asks (`def
build_loader(ds, shuffle=True)` handing `shuffle` on to `DistributedSampler(ds,
shuffle=shuffle)`, here through the module's own `make_sampler()` helper). Whether set_epoch
matters depends on the value the caller passes: a caller asking for a fixed order gets one."""

from __future__ import annotations

from project_support import project_findings

DATA = """\
from torch.utils.data import DataLoader, DistributedSampler, RandomSampler


def make_sampler(dataset, shuffle, distributed):
    if distributed:
        return DistributedSampler(dataset, shuffle=shuffle)
    return RandomSampler(dataset)


def build_loader(dataset, batch_size=64, shuffle=True):
    return DataLoader(dataset, batch_size=batch_size, sampler=make_sampler(dataset, shuffle=shuffle, distributed=True))


def fixed_order_loader(dataset, batch_size=64):
    return DataLoader(dataset, batch_size=batch_size, sampler=make_sampler(dataset, shuffle=False, distributed=True))
"""

TRAIN = """\
import torch.distributed as dist
from data import build_loader, fixed_order_loader

dist.init_process_group("nccl")
loader = {construction}
for epoch in range(20):
    for batch in loader:
        step(batch)
"""


def _rows(tmp_path, construction):
    return project_findings(tmp_path, {"data.py": DATA, "train.py": TRAIN.format(construction=construction)}, ["DDP002"])


def test_caller_leaving_the_shuffle_on_is_reported(tmp_path):
    assert _rows(tmp_path, "build_loader(train_set)") == [("train.py", 6)]


def test_caller_passing_shuffle_true_is_reported(tmp_path):
    assert _rows(tmp_path, "build_loader(train_set, 32, True)") == [("train.py", 6)]


def test_caller_turning_the_shuffle_off_is_left_alone(tmp_path):
    assert _rows(tmp_path, "build_loader(train_set, shuffle=False)") == []


def test_factory_fixing_the_order_itself_is_left_alone(tmp_path):
    assert _rows(tmp_path, "fixed_order_loader(train_set)") == []


STREAM_TRAIN = """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, {base}


class Shards({base}):
    def __init__(self, paths):
        self.paths = paths

    def {access}


dist.init_process_group("nccl")
data = Shards(paths)
loader = DataLoader(data, batch_size=8, sampler=DistributedSampler(data))
for epoch in range(20):
    for batch in loader:
        step(batch)
"""


def test_a_sampler_given_to_a_loader_over_a_stream_is_left_alone(lint):
    # DataLoader raises ValueError for a sampler over an IterableDataset: no epoch ever runs.
    source = STREAM_TRAIN.format(base="IterableDataset", access="__iter__(self):\n        yield from self.paths")
    assert lint(source, ["DDP002"]) == []


def test_the_same_loop_over_a_map_style_dataset_is_reported(lint):
    source = STREAM_TRAIN.format(base="Dataset", access="__getitem__(self, i):\n        return self.paths[i]")
    assert [code for _, code in lint(source, ["DDP002"])] == ["DDP002"]
