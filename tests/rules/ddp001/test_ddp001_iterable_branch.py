"""DDP001 and a loader built in the branch of an `isinstance(dataset, IterableDataset)` test:
there the dataset is a stream, which no sampler can shard (the stream must split itself: DDP009's
question), so the loader is not missing a DistributedSampler. A loader factory with such a branch
and a sampler for every other dataset hands its callers a sharded loader."""

from __future__ import annotations

import pytest

from rule_snippets import write_files

FACTORY = """
    import torch
    from torch.utils.data import DataLoader, DistributedSampler

    def make_loader(dataset):
        if {test}:
            return DataLoader(dataset, batch_size=8)
        return DataLoader(dataset, batch_size=8, sampler=DistributedSampler(dataset))
    """

TRAIN = """
    import torch.distributed as dist
    from data import make_loader

    dist.init_process_group("nccl")
    loader = make_loader(train_set)
    for epoch in range(3):
        for x in loader:
            model(x).sum().backward()
    """


def _rows(tmp_path, test: str) -> list[tuple[str, int]]:
    from ddplint.api import lint_paths
    from ddplint.rules import RULES_BY_CODE

    (tmp_path / "pyproject.toml").write_text("")
    write_files(tmp_path, {"data.py": FACTORY.format(test=test), "train.py": TRAIN})
    found = lint_paths([str(tmp_path)], [RULES_BY_CODE["DDP001"]])
    return sorted((d.filename.replace("\\", "/").rsplit("/", 1)[-1], d.location.row) for d in found)


@pytest.mark.parametrize("test", [
    "isinstance(dataset, torch.utils.data.IterableDataset)",
    "isinstance(dataset, (torch.utils.data.IterableDataset, list))",
])
def test_factory_whose_sampler_less_loader_serves_streams_only_is_left_alone(tmp_path, test):
    assert _rows(tmp_path, test) == []


@pytest.mark.parametrize("test", ["len(dataset) < 100", "isinstance(dataset, torch.utils.data.TensorDataset)"])
def test_factory_whose_sampler_less_loader_serves_other_datasets_is_flagged(tmp_path, test):
    assert _rows(tmp_path, test) == [("train.py", 5)]


def test_loader_in_a_stream_branch_of_the_script_is_left_alone(lint):
    code = """
        import torch
        import torch.distributed as dist
        from torch.utils.data import DataLoader, DistributedSampler

        dist.init_process_group("nccl")
        if isinstance(train_set, torch.utils.data.IterableDataset):
            loader = DataLoader(train_set, batch_size=8)
        else:
            loader = DataLoader(train_set, batch_size=8, sampler=DistributedSampler(train_set))
        for epoch in range(3):
            for x in loader:
                model(x).sum().backward()
        """
    assert [row for row, code in lint(code) if code == "DDP001"] == []
    assert [row for row, code in lint(code.replace("isinstance(train_set, torch.utils.data.IterableDataset)", "len(train_set) < 100"))
            if code == "DDP001"] == [7]
