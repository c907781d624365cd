"""The shape of the DDP tutorial's multigpu.py: the script starts one worker per GPU itself with
torch.multiprocessing.spawn; each worker sets its device, joins the group (nccl) and trains with a
DistributedSampler. Written for GPUs, with no CPU fallback."""
import os
import socket
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

DEVICE_KIND = "cuda" if torch.cuda.is_available() else "cpu"  # read at import, in every worker too


def free_port() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return str(probe.getsockname()[1])


def worker(rank: int, world_size: int, epochs: int) -> None:
    torch.cuda.set_device(rank)
    assert DEVICE_KIND == "cuda", "the worker imported this module without GPUs"
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    data = TensorDataset(torch.randn(1024, 16), torch.randn(1024, 1))
    loader = DataLoader(data, batch_size=32, sampler=DistributedSampler(data), pin_memory=True)
    model = DDP(nn.Linear(16, 1).to(rank), device_ids=[rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(epochs):
        loader.sampler.set_epoch(epoch)
        for x, y in loader:
            optimizer.zero_grad()
            nn.functional.mse_loss(model(x.to(rank)), y.to(rank)).backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ.setdefault("MASTER_PORT", free_port())
    # One worker per GPU, as the tutorial sizes its world; a number given on the command line instead.
    world_size = int(sys.argv[1]) if len(sys.argv) > 1 else torch.cuda.device_count()
    mp.spawn(worker, args=(world_size, 50), nprocs=world_size)
