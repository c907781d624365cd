"""spawn_fixed.py with every rank on GPU 0 (gloo: NCCL refuses two ranks on one device)."""
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


def free_port() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return str(probe.getsockname()[1])


def worker(rank: int, world_size: int, epochs: int) -> None:
    torch.cuda.set_device(0)
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    data = TensorDataset(torch.randn(1024, 16), torch.randn(1024, 1))
    loader = DataLoader(data, batch_size=32, sampler=DistributedSampler(data), pin_memory=True)
    model = DDP(nn.Linear(16, 1).to("cuda:0"), device_ids=[0])  # <- DDP005
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(epochs):
        loader.sampler.set_epoch(epoch)
        for x, y in loader:
            optimizer.zero_grad()
            nn.functional.mse_loss(model(x.to("cuda:0")), y.to("cuda:0")).backward()  # <- DDP005
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ.setdefault("MASTER_PORT", free_port())
    # One worker per GPU, as the tutorial sizes its world; a number given on the command line instead.
    world_size = int(sys.argv[1]) if len(sys.argv) > 1 else torch.cuda.device_count()
    mp.spawn(worker, args=(world_size, 50), nprocs=world_size)
