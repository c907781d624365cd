"""DDP002 across the modules of a project: the finding is judged where the code runs, whichever
module holds the helper it calls. Each case is a small project on disk."""

from __future__ import annotations

from rule_snippets import write_files


def test_set_epoch_in_a_per_epoch_helper_of_another_module(tmp_path):
    from ddplint.api import lint_paths
    from ddplint.rules import RULES_BY_CODE

    engine = """
        def train_one_epoch(model, loader, optimizer, epoch):
            loader.sampler.set_epoch(epoch)
            for x in loader:
                model(x).backward()
                optimizer.step()

        def log_epoch(model, loader, optimizer, epoch):
            print(epoch, len(loader))
        """
    train = """
        import torch.distributed as dist
        from torch.utils.data import DataLoader, DistributedSampler
        from engine import {helper}

        dist.init_process_group("nccl")
        loader = DataLoader(train_set, batch_size=8, sampler=DistributedSampler(train_set))
        for epoch in range(10):
            {helper}(model, loader, optimizer, epoch)
            for x in loader:
                model(x).backward()
                optimizer.step()
        """
    rule = [RULES_BY_CODE["DDP002"]]
    for helper, expected in (("train_one_epoch", []), ("log_epoch", [7])):
        root = tmp_path / helper
        write_files(root, {"engine.py": engine, "train.py": train.format(helper=helper)})
        assert [d.location.row for d in lint_paths([str(root)], rule)] == expected
