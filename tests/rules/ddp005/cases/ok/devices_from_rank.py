"""Three correct ways to pick a GPU per process in one file: spawn rank, set_device, and a
helper module that only uses the current device (the entry point chose it)."""

import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn


def spawned(rank, world_size):
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    device = torch.device("cuda", rank)
    model = nn.parallel.DistributedDataParallel(nn.Linear(8, 8).to(device), device_ids=[rank])
    batch = torch.randn(4, 8, device=device)
    model(batch).sum().backward()


def torchrun_main():
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group("nccl")
    torch.cuda.set_device(local_rank)
    model = nn.Linear(8, 8).cuda()
    inputs = torch.randn(4, 8).to("cuda", non_blocking=True)
    model = nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])
    model(inputs).sum().backward()
    if dist.get_rank() == 0:
        torch.save(model.module.state_dict(), "ckpt.pt")


if __name__ == "__main__":
    if "LOCAL_RANK" in os.environ:
        torchrun_main()
    else:
        mp.spawn(spawned, args=(torch.cuda.device_count(),), nprocs=torch.cuda.device_count())
