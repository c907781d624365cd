"""DDP003 where it depends on what a value is where it is used, in program order, and on which
scripts are distributed: DataParallel that never runs a training forward, or only on one GPU. Every
shape is tested on what must be flagged and on what must be left alone."""

from __future__ import annotations

import textwrap

from ddplint.engine import lint_source
from ddplint.rules import select_rules


# -- DDP003: DataParallel that runs a forward ------------------------------------------------------
def test_data_parallel_only_for_loading_a_prefixed_checkpoint(lint):
    loader_only = """
        import torch
        import torch.nn as nn

        def restore(path):
            net = nn.DataParallel(build())
            net.load_state_dict(torch.load(path, map_location="cpu"))
            net = net.module
            return net
        """
    assert lint(loader_only, ["DDP003"]) == []
    forward = """
        import torch.nn as nn

        def run(batches):
            net = nn.DataParallel(build())
            net.load_state_dict(state)
            return [net(x) for x in batches]
        """
    assert lint(forward, ["DDP003"]) == [(4, "DDP003")]
    handed_on = """
        import torch.nn as nn

        def main():
            net = nn.DataParallel(build())
            fit(net, loader)
        """
    assert lint(handed_on, ["DDP003"]) == [(4, "DDP003")]


def _messages(source: str, code: str) -> list[str]:
    """Each finding's message and its why, as `--output-format full` shows them."""
    return [f"{d.message}\n{d.explanation}" for d in lint_source(textwrap.dedent(source).lstrip("\n"), "snippet.py", select_rules([code]))]


def test_data_parallel_over_one_gpu_or_as_the_fallback_of_a_ddp_path(lint):
    assert lint(
        """
        import torch.nn as nn

        class Metric:
            def __init__(self, gpu_ids=[0]):
                self.net = nn.DataParallel(build(), device_ids=gpu_ids)

        metric = Metric()
        """,
        ["DDP003"],
    ) == []
    fallback = """
        import torch.nn as nn
        from torch.nn.parallel import DistributedDataParallel as DDP

        def main(args, n_gpu):
            if {test}:
                model = DDP(build(), device_ids=[args.local_rank])
            elif n_gpu > 1:
                model = nn.DataParallel(build())
            train(model)
        """
    # The fallback of a DDP path is reported too (issue 20's decision), saying what the DDP path needs.
    assert lint(fallback.format(test="args.local_rank != -1"), ["DDP003"]) == [(8, "DDP003")]
    assert lint(fallback.format(test="args.fancy"), ["DDP003"]) == [(8, "DDP003")]  # next to the DDP arm
    [message] = _messages(fallback.format(test="args.fancy"), "DDP003")
    assert "single-process fallback" in message and "`args.fancy` to be true" in message
    assert lint(
        """
        import torch.nn as nn

        def main(args, n_gpu):
            if n_gpu > 1:
                model = nn.DataParallel(build())
            train(model)
        """,
        ["DDP003"],
    ) == [(5, "DDP003")]


def test_single_process_condition_through_a_module_level_rank(lint):
    source = """
        import os
        import torch

        RANK = int(os.getenv("RANK", "-1"))

        def train(model, cuda):
            if cuda and RANK == -1 and torch.cuda.device_count() > 1:
                model = torch.nn.DataParallel(model)
            return model(batch)
        """
    # `RANK == -1`: the single-process path of a script launched with torchrun otherwise
    [fallback] = _messages(source, "DDP003")
    assert "single-process fallback" in fallback and "`RANK == -1` to be false" in fallback
    [plain] = _messages(source.replace("RANK == -1", "RANK >= 0"), "DDP003")
    assert "fallback" not in plain
    assert lint(source.replace("RANK == -1", "RANK >= 0"), ["DDP003"]) == [(8, "DDP003")]


def test_data_parallel_device_ids_from_a_one_gpu_default(lint):
    source = """
        import torch.nn as nn

        class Metric:
            def initialize(self, net, gpu_ids={default}):
                self.net = nn.DataParallel(net, device_ids=gpu_ids)
        """
    assert lint(source.format(default="[0]"), ["DDP003"]) == []
    assert lint(source.format(default="[0, 1]"), ["DDP003"]) == [(5, "DDP003")]


def test_data_parallel_in_test_code_and_in_a_loop_that_rebuilds_the_model(lint):
    test_file = """
        import unittest
        import torch.nn as nn

        class CheckpointTest(unittest.TestCase):
            def test_loads_into_wrapped_model(self):
                self.trainer.model = nn.DataParallel(self.trainer.model)
                self.checkpoint.load_state_dict()
        """
    assert lint(test_file, ["DDP003"]) == []
    looped = """
        import torch.nn as nn

        def check_loading(state):
            for wrap in [False, True]:
                model = build()
                if wrap:
                    model = nn.DataParallel(model)
                model.load_state_dict(state)
                {tail}
        """
    assert lint(looped.format(tail="pass"), ["DDP003"]) == []
    assert lint(looped.format(tail="model(batch)"), ["DDP003"]) == [(7, "DDP003")]
