"""DDP003: a DataParallel that no forward ever goes through, and test files a test runner
collects by its own naming (nose's `testName`)."""

from __future__ import annotations

SETUP_CHECK = """
import os
import torch
import torch.nn as nn
import torch.distributed as dist

def wrap(model, device, distributed):
    if distributed:
        model = nn.parallel.DistributedDataParallel(model.to(device), device_ids=[device])
    else:
        model = model.to(device)
        if torch.cuda.device_count() > 1:
            model = nn.parallel.DataParallel(model)  # <- line 12
    return model

def main():
    distributed = int(os.environ.get("WORLD_SIZE", "1")) > 1
    if distributed:
        dist.init_process_group("nccl")
    model = wrap(Net(), "cuda", distributed)
    {use}

main()
"""


def test_wrapper_returned_to_a_caller_that_only_prints_it_is_left_alone(lint):
    source = SETUP_CHECK.replace("{use}", 'print("model ready", type(model))')
    assert lint(source, select=["DDP003"]) == []


def test_wrapper_returned_to_a_caller_that_runs_it_is_flagged(lint):
    source = SETUP_CHECK.replace("{use}", "for x in loader:\n        model(x).sum().backward()")
    assert lint(source, select=["DDP003"]) == [(12, "DDP003")]


def test_wrapper_returned_to_a_caller_that_hands_it_on_is_flagged(lint):
    source = SETUP_CHECK.replace("{use}", "train(model, loader)")
    assert lint(source, select=["DDP003"]) == [(12, "DDP003")]


def test_wrapper_driven_through_forward_is_flagged(lint):
    source = SETUP_CHECK.replace("{use}", "for x in loader:\n        model.forward(x).sum().backward()")
    assert lint(source, select=["DDP003"]) == [(12, "DDP003")]


def test_wrapper_returned_by_a_function_nothing_here_calls_is_flagged(lint):
    # another module may call it and train the model it returns
    source = """
    import torch.nn as nn

    def build(net):
        net = nn.DataParallel(net.cuda())
        return net
    """
    assert lint(source, select=["DDP003"]) == [(4, "DDP003")]


def test_unused_local_wrapper_is_left_alone(lint):
    source = """
    import torch.nn as nn

    def check():
        model = nn.DataParallel(Net()).cuda()
        print(model)

    check()
    """
    assert lint(source, select=["DDP003"]) == []


def test_unused_module_level_wrapper_is_flagged(lint):
    # another module may `from setup import model` and train it
    source = """
    import torch.nn as nn

    model = nn.DataParallel(Net()).cuda()
    print(model)
    """
    assert lint(source, select=["DDP003"]) == [(3, "DDP003")]


NOSE_TEST = """
import torch

def testReplicatedNorm():
    norm = ReplicatedNorm(8).cuda()
    norm = torch.nn.DataParallel(norm).cuda()
    for _ in range(3):
        compare(norm, torch.rand(4, 8).cuda())

if __name__ == "__main__":
    import {runner}
    {runner}.runmodule()
"""


def test_nose_test_function_is_left_alone(lint):
    assert lint(NOSE_TEST.replace("{runner}", "nose"), select=["DDP003"]) == []


def test_same_function_without_a_test_runner_is_flagged(lint):
    assert lint(NOSE_TEST.replace("{runner}", "helpers"), select=["DDP003"]) == [(5, "DDP003")]


def test_a_scripts_own_testing_function_is_not_a_test(lint):
    source = """
    import torch
    import unittest

    def testing_run(model, loader):
        model = torch.nn.DataParallel(model)
        for x in loader:
            model(x)
    """
    assert lint(source, select=["DDP003"]) == [(5, "DDP003")]


def test_wrapper_returned_with_the_optimizer_is_flagged(lint):
    # `return model, optimizer`: the caller trains what it gets back
    source = """
    import torch
    import torch.nn as nn

    def setup(net):
        model = nn.DataParallel(net.cuda())
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        return model, optimizer
    """
    assert lint(source, select=["DDP003"]) == [(5, "DDP003")]


def test_wrapper_put_in_a_list_is_flagged(lint):
    source = """
    import torch.nn as nn

    def main():
        model = nn.DataParallel(Net().cuda())
        models = [model]
        run_all(models)

    main()
    """
    assert lint(source, select=["DDP003"]) == [(4, "DDP003")]


def test_wrapper_only_loading_weights_in_a_function_is_left_alone(lint):
    source = """
    import torch
    import torch.nn as nn

    def restore(path):
        model = nn.DataParallel(Net())
        model.load_state_dict(torch.load(path, map_location="cpu"))
        model = model.module
        return model
    """
    assert lint(source, select=["DDP003"]) == []


def test_functional_data_parallel_whose_output_is_reshaped_is_flagged(lint):
    # the functional form runs the forward in the call: its result is the output, not a wrapper
    source = """
    import torch.nn as nn

    class Critic(nn.Module):
        def forward(self, x):
            if x.is_cuda and self.ngpu > 1:
                out = nn.parallel.data_parallel(self.body, x, range(self.ngpu))
            else:
                out = self.body(x)
            return out.view(-1, 1).squeeze(1)
    """
    assert lint(source, select=["DDP003"]) == [(6, "DDP003")]
