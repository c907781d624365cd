"""Workers started with multiprocessing.Process that join the process group themselves, each with
the rank it is given (started in reverse order: the rank, not the start order, names them).
`--start-method` picks how multiprocessing starts them (spawn: a new interpreter; fork: a copy)."""
import argparse
import multiprocessing
import os
import socket

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def free_port() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return str(probe.getsockname()[1])


def worker(rank: int, world_size: int) -> None:
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    data = TensorDataset(torch.randn(512, 8), torch.randn(512, 1))
    loader = DataLoader(data, batch_size=16, sampler=DistributedSampler(data))
    model = DDP(nn.Linear(8, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(50):
        loader.sampler.set_epoch(epoch)
        for x, y in loader:
            optimizer.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--start-method", default="spawn")
    parser.add_argument("--world-size", type=int, default=2)
    options = parser.parse_args()
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ.setdefault("MASTER_PORT", free_port())
    context = multiprocessing.get_context(options.start_method)
    workers = [context.Process(target=worker, args=(rank, options.world_size))
               for rank in reversed(range(options.world_size))]
    for process in workers:
        process.start()
    for process in workers:
        process.join()
