"""DDP001 beside a run-mode flag spelt `dist` (`def build(..., dist: bool)`, `self.dist`,
`use_dist`): its `else:` arm is the single-process run, whose plain shuffling loader is right.
`dist` the module (`import torch.distributed as dist`) is never such a flag."""

from __future__ import annotations

BUILD = """
import torch.distributed as dist_api
from torch.utils.data import DataLoader, DistributedSampler


def build_loaders(train_set, batch_size, {flag}):
    if {test}:
        sampler = DistributedSampler(train_set)
        loader = DataLoader(train_set, batch_size=batch_size, sampler=sampler)
    else:
        loader = DataLoader(train_set, batch_size=batch_size, shuffle=True)
    return loader


def main(args):
    dist_api.init_process_group("nccl")
    loader = build_loaders(load_set(), 32, {passed})
    for epoch in range(10):
        loader.sampler.set_epoch(epoch)
        for batch in loader:
            step(batch)
"""


def _codes(lint, flag, test, passed):
    return [code for _, code in lint(BUILD.format(flag=flag, test=test, passed=passed), ["DDP001"])]


def test_else_of_a_dist_parameter_is_the_single_process_run(lint):
    assert _codes(lint, "dist: bool", "dist", "dist=args.multi") == []


def test_else_of_a_use_dist_flag_is_the_single_process_run(lint):
    assert _codes(lint, "use_dist", "use_dist", "args.multi") == []


def test_else_of_an_unrelated_flag_is_reported(lint):
    assert _codes(lint, "fast", "fast", "args.fast") == ["DDP001"]
