"""DDP001 on sampler and loader shapes that used to go unreported: a sampler assigned to a loader
already built, and a project's DataLoader subclass of another module. Each shape is flagged, and its
look-alike left alone, by what the code does when it runs. Snippets are our own."""

from __future__ import annotations

import pytest

from rule_snippets import findings_every_way, sampler_findings

# -- `loader.sampler = ...` after the DataLoader is built ------------------------------------


def test_torch_refuses_a_sampler_set_after_the_loader_is_built():
    """What the DDP001 message below claims, checked against the installed torch."""
    torch = pytest.importorskip("torch")
    from torch.utils.data import DataLoader, SequentialSampler, TensorDataset

    dataset = TensorDataset(torch.zeros(4, 1))
    loader = DataLoader(dataset, batch_size=2, shuffle=True)
    with pytest.raises(ValueError, match="sampler attribute should not be set"):
        loader.sampler = SequentialSampler(dataset)


def test_a_sampler_assigned_to_a_built_loader_shards_nothing():
    found = sampler_findings(
        """
        loader = DataLoader(train_set, batch_size=32, shuffle=True)
        loader.sampler = DistributedSampler(train_set)
        for epoch in range(10):
            loader.sampler.set_epoch(epoch)
            for x, y in loader:
                model(x).sum().backward()
        """,
        "DDP001",
    )
    assert [d.location.row for d in found] == [7]
    assert "raises ValueError" in found[0].explanation
    assert "`loader.sampler = DistributedSampler(train_set)`" in found[0].explanation
    assert found[0].fix is None  # passing a sampler would leave the raising line in place


def test_a_sampler_attribute_on_something_else_is_not_that_mistake():
    found = sampler_findings(
        """
        sampler = DistributedSampler(train_set)
        loader = DataLoader(train_set, batch_size=32, sampler=sampler)
        config.sampler = sampler
        for epoch in range(10):
            sampler.set_epoch(epoch)
            for x, y in loader:
                model(x).sum().backward()
        """,
        "DDP001",
    )
    assert found == []


# -- a DataLoader subclass of another module ---------------------------------------------------

SUBCLASS_TRAIN = """\
import torch.distributed as dist
from loaders import ShardLoader

dist.init_process_group("nccl")
loader = ShardLoader(train_set, batch_size=32, shuffle=True)
for epoch in range(10):
    for x, y in loader:
        model(x).sum().backward()
        optimizer.step()
"""


def test_a_project_dataloader_subclass_without_a_sampler(tmp_path, monkeypatch, capsys):
    loaders = """\
        from torch.utils.data import DataLoader


        class ShardLoader(DataLoader):
            def __init__(self, dataset, **options):
                options.setdefault("num_workers", 4)
                super().__init__(dataset, **options)
        """
    found = findings_every_way(tmp_path, monkeypatch, capsys, {"loaders.py": loaders, "train.py": SUBCLASS_TRAIN})
    assert [(row, code) for row, code, _ in found] == [(5, "DDP001")]


def test_a_project_dataloader_subclass_that_shards_itself(tmp_path, monkeypatch, capsys):
    loaders = """\
        from torch.utils.data import DataLoader, DistributedSampler


        class ShardLoader(DataLoader):
            def __init__(self, dataset, shuffle=True, **options):
                super().__init__(dataset, sampler=DistributedSampler(dataset, shuffle=shuffle), **options)
        """
    assert findings_every_way(tmp_path, monkeypatch, capsys, {"loaders.py": loaders, "train.py": SUBCLASS_TRAIN}) == []
