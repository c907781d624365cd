"""Properly sharded training, but rank 1's data is slow to load (think: its shard sits on a slow
disk). Every step ends in an all_reduce, so rank 0 waits there for rank 1 each step: an imbalance
no static rule predicts."""
import time

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, Dataset, DistributedSampler


class SlowOnRankOne(Dataset):
    def __init__(self, rank, size=256):
        self.delay = 0.002 if rank == 1 else 0.0
        self.size = size

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        if self.delay:
            time.sleep(self.delay)
        return torch.full((4,), float(index))


dist.init_process_group("gloo")
rank = dist.get_rank()
dataset = SlowOnRankOne(rank)
loader = DataLoader(dataset, batch_size=16, sampler=DistributedSampler(dataset, shuffle=False))
for _ in range(3):
    for batch in loader:
        loss = batch.sum()
        dist.all_reduce(loss)
dist.destroy_process_group()
