"""A tutorial-style torchrun script that kept the single-GPU device line and passes device_ids=[0]."""

import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

DEVICE = "cuda:0"


def main():
    dist.init_process_group(backend="nccl")
    rank = int(os.environ["RANK"])
    model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10)).to(DEVICE)  # <- DDP005
    model = DistributedDataParallel(model, device_ids=[0], output_device=0)  # <- DDP005
    data = TensorDataset(torch.randn(2048, 64), torch.randint(0, 10, (2048,)))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=32, sampler=sampler)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.to(DEVICE), y.to(DEVICE)  # <- DDP005 DDP005
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    if rank == 0:
        torch.save(model.module.state_dict(), "final.pt")


if __name__ == "__main__":
    main()
