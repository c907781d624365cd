"""DDP002 and where code runs (issue 20, item 3): a finding about ranks needs its code to run in a
rank. Each shape comes twice: left alone where the code runs in one process only, flagged where the
same lines run in every spawned or launched rank (a run of one epoch, by default or by a written
number). Expected findings are marked `# <- DDP002` on their line."""

from __future__ import annotations

import pytest

from rule_snippets import marked_findings

# -- one epoch ---------------------------------------------------------------------------------
ONE_EPOCH = """
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

EPOCHS = {epochs}
dist.init_process_group("nccl")
sampler = DistributedSampler(train_set)
loader = DataLoader(train_set, batch_size=8, sampler=sampler)
for epoch in {loop}:{mark}
    for batch in loader:
        learn(batch)
"""


@pytest.mark.parametrize("loop", ["range(1)", "range(0, 1)", "range(EPOCHS)"])
def test_a_single_epoch_needs_no_set_epoch(lint, loop):
    assert lint(ONE_EPOCH.format(epochs=1, loop=loop, mark=""), ["DDP002"]) == []


@pytest.mark.parametrize("loop", ["range(2)", "range(1, 3)", "range(EPOCHS)", "range(args.epochs)"])
def test_several_epochs_still_need_set_epoch(lint, loop):
    source = ONE_EPOCH.format(epochs=4, loop=loop, mark="  # <- DDP002")
    assert lint(source, ["DDP002"]) == marked_findings(source)


def test_an_epoch_count_that_is_one_by_default_still_needs_set_epoch(lint):
    """`def main(epochs=1)`: a default is what the user changes, not a fixed single epoch."""
    source = """
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


def main(epochs=1):
    dist.init_process_group("nccl")
    sampler = DistributedSampler(train_set)
    loader = DataLoader(train_set, batch_size=8, sampler=sampler)
    for epoch in range(epochs):  # <- DDP002
        for batch in loader:
            learn(batch)


if __name__ == "__main__":
    main()
"""
    assert lint(source, ["DDP002"]) == marked_findings(source)
