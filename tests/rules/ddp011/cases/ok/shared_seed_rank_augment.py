"""Per-rank seeds for augmentation, one shared seed for the sampler."""

import time

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


def main(args, dataset, model, optimizer):
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.manual_seed(args.seed + rank)
    started = time.time()
    sampler = DistributedSampler(dataset, seed=args.seed, drop_last=True)
    loader = DataLoader(dataset, batch_size=32, sampler=sampler)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if rank == 0:
            print(f"epoch {epoch} done after {time.time() - started:.0f} s")
