"""DDP005: `CUDA_VISIBLE_DEVICES` written as a literal list of several GPUs is not one GPU per process.

A script that pins `os.environ["CUDA_VISIBLE_DEVICES"] = "0,1,2,3"` for every process still lets
each rank see all four GPUs, so `.cuda()` without `torch.cuda.set_device` puts every rank on the
first of them. Setting the variable to one GPU per process (the rank's own) keeps `cuda:0` right.
"""

from __future__ import annotations


def ddp005_lines(lint, source: str) -> list[int]:
    return [line for line, code in lint(source, ["DDP005"]) if code == "DDP005"]


def test_visible_devices_listing_several_gpus_does_not_excuse_cuda_without_set_device(lint):
    source = """
        import os
        os.environ["CUDA_VISIBLE_DEVICES"] = "0,1,2,3"
        import torch
        import torch.distributed as dist

        def main():
            dist.init_process_group("nccl")
            net = torch.nn.Linear(4, 4).cuda()
            return torch.nn.parallel.DistributedDataParallel(net)

        if __name__ == "__main__":
            main()
        """
    assert ddp005_lines(lint, source) == [8]


def test_visible_devices_listing_several_gpus_through_update_is_flagged(lint):
    source = """
        import os
        import torch
        import torch.distributed as dist

        os.environ.update(CUDA_VISIBLE_DEVICES="2, 3")
        dist.init_process_group(backend="nccl")
        batch = torch.ones(8).to("cuda")
        """
    assert ddp005_lines(lint, source) == [7]


def test_visible_devices_listing_several_gpus_with_set_device_is_left_alone(lint):
    source = """
        import os
        os.environ["CUDA_VISIBLE_DEVICES"] = "0,1,2,3"
        import torch
        import torch.distributed as dist

        def main():
            dist.init_process_group("nccl")
            local_rank = int(os.environ["LOCAL_RANK"])
            torch.cuda.set_device(local_rank)
            net = torch.nn.Linear(4, 4).cuda()
            return torch.nn.parallel.DistributedDataParallel(net, device_ids=[local_rank])

        if __name__ == "__main__":
            main()
        """
    assert ddp005_lines(lint, source) == []


def test_visible_devices_one_gpu_per_rank_is_left_alone(lint):
    source = """
        import os
        import torch
        import torch.distributed as dist

        def worker(rank, world):
            os.environ["CUDA_VISIBLE_DEVICES"] = str(rank)
            dist.init_process_group("nccl", rank=rank, world_size=world)
            net = torch.nn.Linear(4, 4).cuda()
        """
    assert ddp005_lines(lint, source) == []


def test_visible_devices_single_literal_gpu_is_left_alone(lint):
    # One GPU named for the whole process: one GPU per machine, where cuda:0 is right.
    source = """
        import os
        import torch
        import torch.distributed as dist

        os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")
        dist.init_process_group("nccl")
        net = torch.nn.Linear(4, 4).cuda()
        """
    assert ddp005_lines(lint, source) == []
