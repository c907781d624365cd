import math
import os
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, Sampler


class DistributedBucketSampler(Sampler):
    def __init__(self, lengths, batch_size, rank, world_size, seed=0):
        self.lengths, self.batch_size = lengths, batch_size
        self.rank, self.world_size, self.seed, self.epoch = rank, world_size, seed, 0

    def set_epoch(self, epoch):
        self.epoch = epoch

    def __iter__(self):
        g = torch.Generator().manual_seed(self.seed + self.epoch)
        order = torch.randperm(len(self.lengths), generator=g).tolist()
        return iter(order[self.rank::self.world_size])

    def __len__(self):
        return math.ceil(len(self.lengths) / self.world_size)


dist.init_process_group("nccl")
rank, world = dist.get_rank(), dist.get_world_size()
dataset = torch.load("tokenized_train.pt")
sampler = DistributedBucketSampler([len(x) for x in dataset], 32, rank, world)
train_loader = DataLoader(dataset, batch_size=32, sampler=sampler, collate_fn=lambda b: b)
for epoch in range(5):
    sampler.set_epoch(epoch)
    for batch in train_loader:
        pass
