"""DDP005: a `--local_rank` option defaulting to 0 as the only source of the rank's GPU.

The old `torch.distributed.launch` passed `--local_rank=N` to each process; torchrun sets the
LOCAL_RANK environment variable instead, so a script that only reads the option keeps its
default, 0, in every rank.
"""

from __future__ import annotations


def ddp005_lines(lint, source: str) -> list[int]:
    return [line for line, code in lint(source, ["DDP005"]) if code == "DDP005"]


def test_flag_defaulting_to_zero_used_through_another_attribute_is_flagged(lint):
    source = """
        import argparse
        import torch
        import torch.distributed as dist

        def main():
            parser = argparse.ArgumentParser()
            parser.add_argument("--local_rank", type=int, default=0)
            args = parser.parse_args()
            args.gpu = args.local_rank
            torch.cuda.set_device(args.gpu)
            dist.init_process_group("nccl")

        if __name__ == "__main__":
            main()
        """
    assert ddp005_lines(lint, source) == [7]


def test_hyphenated_flag_in_device_ids_is_flagged(lint):
    source = """
        import argparse
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP

        parser = argparse.ArgumentParser()
        parser.add_argument("--local-rank", default=0, type=int)
        opts = parser.parse_args()
        dist.init_process_group("nccl")
        model = DDP(net.cuda(opts.local_rank), device_ids=[opts.local_rank])
        """
    assert ddp005_lines(lint, source) == [6]


def test_flag_whose_default_comes_from_the_environment_is_left_alone(lint):
    source = """
        import argparse
        import os
        import torch
        import torch.distributed as dist

        parser = argparse.ArgumentParser()
        parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
        args = parser.parse_args()
        torch.cuda.set_device(args.local_rank)
        dist.init_process_group("nccl")
        """
    assert ddp005_lines(lint, source) == []


def test_flag_overwritten_from_the_environment_is_left_alone(lint):
    source = """
        import argparse
        import os
        import torch
        import torch.distributed as dist

        parser = argparse.ArgumentParser()
        parser.add_argument("--local_rank", type=int, default=0)
        args = parser.parse_args()
        if "LOCAL_RANK" in os.environ:
            args.local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(args.local_rank)
        dist.init_process_group("nccl")
        """
    assert ddp005_lines(lint, source) == []


def test_flag_that_chooses_no_device_is_left_alone(lint):
    source = """
        import argparse
        import torch
        import torch.distributed as dist

        parser = argparse.ArgumentParser()
        parser.add_argument("--local_rank", type=int, default=0)
        args = parser.parse_args()
        dist.init_process_group("nccl")
        rank = dist.get_rank()
        torch.cuda.set_device(rank % torch.cuda.device_count())
        print("launched with", args.local_rank)
        """
    assert ddp005_lines(lint, source) == []


def test_flag_without_a_zero_default_is_left_alone(lint):
    source = """
        import argparse
        import torch
        import torch.distributed as dist

        parser = argparse.ArgumentParser()
        parser.add_argument("--local_rank", type=int, required=True)
        args = parser.parse_args()
        torch.cuda.set_device(args.local_rank)
        dist.init_process_group("nccl")
        """
    assert ddp005_lines(lint, source) == []
