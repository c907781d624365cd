"""DDP001 for a sampler unpacked from a dataset helper of another module
(`train_ds, valid_ds, sampler = get_datasets(...)`): when every return of that helper puts None or
a sampler over the whole dataset (RandomSampler, WeightedRandomSampler) in that place, the
training loader shards nothing, whatever the call returns. A helper that may return a
DistributedSampler, or a sampler class of its own, is trusted."""

from __future__ import annotations

from rule_snippets import findings_every_way

SCRIPT = """\
import torch.distributed as dist
from torch.utils.data import DataLoader
from folds import get_datasets

dist.init_process_group("nccl")
train_ds, valid_ds, train_sampler = get_datasets(fold=0)
loader = DataLoader(train_ds, batch_size=32, sampler=train_sampler, shuffle=train_sampler is None)
for epoch in range(10):
    for x, y in loader:
        model(x).sum().backward()
        opt.step()
"""

HELPER = """\
import torch.distributed as dist
from torch.utils.data import DistributedSampler, RandomSampler, WeightedRandomSampler


def get_datasets(fold, balance=False):
    train_ds, valid_ds = Folds(fold, "train"), Folds(fold, "valid")
    {body}
    return train_ds, valid_ds, sampler
"""


def _found(tmp_path, monkeypatch, capsys, body: str) -> list[tuple[int, str]]:
    files = {"folds.py": HELPER.format(body=body), "train.py": SCRIPT}
    found = findings_every_way(tmp_path, monkeypatch, capsys, files)
    return [(row, code) for row, code, _ in found if code == "DDP001"]  # DDP002 may see the sampler too


def test_a_weighted_sampler_or_none_from_the_helper(tmp_path, monkeypatch, capsys):
    body = "sampler = WeightedRandomSampler(weights_of(train_ds), len(train_ds)) if balance else None"
    assert _found(tmp_path, monkeypatch, capsys, body) == [(7, "DDP001")]


def test_a_random_sampler_in_every_return_of_the_helper(tmp_path, monkeypatch, capsys):
    body = "if balance:\n        return train_ds, valid_ds, RandomSampler(train_ds)\n    sampler = RandomSampler(valid_ds)"
    assert _found(tmp_path, monkeypatch, capsys, body) == [(7, "DDP001")]


def test_left_alone_when_the_helper_may_return_a_distributed_sampler(tmp_path, monkeypatch, capsys):
    body = "sampler = DistributedSampler(train_ds) if dist.is_initialized() else RandomSampler(train_ds)"
    assert _found(tmp_path, monkeypatch, capsys, body) == []


def test_left_alone_when_the_helper_returns_a_sampler_class_of_its_own(tmp_path, monkeypatch, capsys):
    # A project sampler class is trusted to shard (the rule's documented assumption).
    assert _found(tmp_path, monkeypatch, capsys, "sampler = BalancedShardSampler(train_ds)") == []


def test_the_message_names_the_helper(tmp_path, monkeypatch, capsys):
    files = {"folds.py": HELPER.format(body="sampler = WeightedRandomSampler(weights_of(train_ds), 64)"), "train.py": SCRIPT}
    found = [f for f in findings_every_way(tmp_path, monkeypatch, capsys, files) if f[1] == "DDP001"]
    assert found and "gets its sampler from `get_datasets(...)`, never a DistributedSampler" in found[0][2]
