"""Seeds every RNG per rank in one helper, and reuses that seed for the sampler."""

import os
import random

import numpy as np
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


def seed_everything(base):
    seed = base + int(os.environ.get("RANK", 0))
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    return seed


def make_loader(dataset, seed, batch_size=64):
    sampler = DistributedSampler(dataset, shuffle=True, seed=seed)  # <- DDP011
    return DataLoader(dataset, batch_size=batch_size, sampler=sampler, num_workers=2)


def main(dataset, model, optimizer):
    dist.init_process_group("gloo")
    seed = seed_everything(1234)
    loader = make_loader(dataset, seed)
    for epoch in range(20):
        loader.sampler.set_epoch(epoch)
        for batch, target in loader:
            loss = torch.nn.functional.mse_loss(model(batch), target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
