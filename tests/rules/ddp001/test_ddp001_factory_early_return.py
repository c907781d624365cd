"""DDP001 on a data helper that returns its datasets when asked (`if return_datasets: return
train_set, val_set`) and plain shuffling loaders otherwise: a distributed script asking for the
datasets builds its own sharded loaders, and gets no loader from the helper."""

from __future__ import annotations

from project_support import project_findings

DATA = """\
from torch.utils.data import DataLoader


def get_data(name, batch_size=32, return_datasets=False):
    train_set, val_set = load(name)
    if return_datasets:
        return train_set, val_set
    return DataLoader(train_set, batch_size=batch_size, shuffle=True), DataLoader(val_set, batch_size=batch_size)
"""

TRAIN = """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler
from data import get_data

dist.init_process_group("nccl")
{take}
for epoch in range(10):
    for batch in train_loader:
        step(batch)
"""

OWN_LOADER = """train_set, _ = get_data("snli", return_datasets=True)
sampler = DistributedSampler(train_set)
train_loader = DataLoader(train_set, batch_size=32, sampler=sampler)
sampler.set_epoch(0)"""


def _rows(tmp_path, take):
    return project_findings(tmp_path, {"data.py": DATA, "train.py": TRAIN.format(take=take)}, ["DDP001"])


def test_datasets_asked_for_are_no_loader(tmp_path):
    assert _rows(tmp_path, OWN_LOADER) == []


def test_the_helper_s_plain_loader_is_reported(tmp_path):
    assert _rows(tmp_path, 'train_loader, _ = get_data("snli")') == [("train.py", 6)]
