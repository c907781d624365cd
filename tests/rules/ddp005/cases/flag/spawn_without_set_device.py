"""mp.spawn workers that join the group and then call .cuda() without choosing a GPU."""

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn


def worker(rank, world_size):
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29500", rank=rank, world_size=world_size)
    model = nn.Linear(128, 128).cuda()  # <- DDP005
    ddp_model = nn.parallel.DistributedDataParallel(model)
    optimizer = torch.optim.Adam(ddp_model.parameters())
    for _ in range(100):
        inputs = torch.randn(16, 128).cuda()
        ddp_model(inputs).sum().backward()
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    n = torch.cuda.device_count()
    mp.spawn(worker, args=(n,), nprocs=n)
