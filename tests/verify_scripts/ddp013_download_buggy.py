"""DDP013 on 2 CPU ranks: every rank builds a downloading dataset into one folder (a stand-in
torchvision beside this script writes its files as the real one would)."""

import sys

import torch
import torch.distributed as dist
import torch.nn as nn
import torchvision
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

root = sys.argv[1]
dist.init_process_group("gloo")
data = torchvision.datasets.MNIST(root, train=True, download=True)  # <- DDP013
loader = DataLoader(data, batch_size=8, sampler=DistributedSampler(data))
model = DDP(nn.Linear(8, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(100):
    loader.sampler.set_epoch(epoch)
    for x, y in loader:
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
