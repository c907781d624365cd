"""DDP005: two more ways of working on the current CUDA device without naming one.

`torch.set_default_device("cuda")` makes every tensor created afterwards (a model's parameters
too) land on the current device: GPU 0 in every rank until the rank's own GPU is made current.
`torch.cuda.Event(enable_timing=True)` and `torch.cuda.Stream(priority=-1)` name no device either
(keywords that are not `device=`): an event records on the current device's stream.
"""

from __future__ import annotations


def ddp005_lines(lint, source: str) -> list[int]:
    return [line for line, code in lint(source, ["DDP005"]) if code == "DDP005"]


def test_default_device_cuda_without_set_device_is_flagged(lint):
    source = """
        import torch
        import torch.distributed as dist

        def main():
            dist.init_process_group("nccl")
            torch.set_default_device("cuda")
            net = torch.nn.Linear(8, 8)
            return torch.nn.parallel.DistributedDataParallel(net)
        """
    assert ddp005_lines(lint, source) == [6]


def test_default_device_gpu0_is_flagged(lint):
    source = """
        import torch
        import torch.distributed as dist

        dist.init_process_group("nccl")
        torch.set_default_device("cuda:0")
        """
    assert ddp005_lines(lint, source) == [5]


def test_default_device_after_set_device_is_left_alone(lint):
    source = """
        import os
        import torch
        import torch.distributed as dist

        def main():
            dist.init_process_group("nccl")
            torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
            torch.set_default_device("cuda")
            net = torch.nn.Linear(8, 8)
        """
    assert ddp005_lines(lint, source) == []


def test_default_device_cpu_is_left_alone(lint):
    source = """
        import torch
        import torch.distributed as dist

        dist.init_process_group("nccl")
        torch.set_default_device("cpu")
        """
    assert ddp005_lines(lint, source) == []


def test_timing_events_of_a_program_that_never_sets_the_device_are_flagged(lint):
    source = """
        import os
        import torch
        import torch.distributed as dist

        local_rank = int(os.environ["LOCAL_RANK"])
        dist.init_process_group("nccl")
        net = torch.nn.Linear(8, 8).to(local_rank)
        begin = torch.cuda.Event(enable_timing=True)
        begin.record()
        """
    assert ddp005_lines(lint, source) == [6]


def test_timing_events_after_set_device_are_left_alone(lint):
    source = """
        import os
        import torch
        import torch.distributed as dist

        local_rank = int(os.environ["LOCAL_RANK"])
        dist.init_process_group("nccl")
        torch.cuda.set_device(local_rank)
        net = torch.nn.Linear(8, 8).to(local_rank)
        begin = torch.cuda.Event(enable_timing=True)
        begin.record()
        """
    assert ddp005_lines(lint, source) == []


def test_stream_given_the_rank_device_is_left_alone(lint):
    source = """
        import os
        import torch
        import torch.distributed as dist

        local_rank = int(os.environ["LOCAL_RANK"])
        dist.init_process_group("nccl")
        net = torch.nn.Linear(8, 8).to(local_rank)
        side = torch.cuda.Stream(device=local_rank, priority=-1)
        """
    assert ddp005_lines(lint, source) == []


def test_stream_with_only_a_priority_is_flagged(lint):
    source = """
        import os
        import torch
        import torch.distributed as dist

        local_rank = int(os.environ["LOCAL_RANK"])
        dist.init_process_group("nccl")
        net = torch.nn.Linear(8, 8).to(local_rank)
        side = torch.cuda.Stream(priority=-1)
        """
    assert ddp005_lines(lint, source) == [6]
