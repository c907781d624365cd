"""DDP015 fixed on 2 CPU ranks: the micro-batches that do not step run their backward under no_sync()."""

import contextlib

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group("gloo")
torch.manual_seed(0)
data = TensorDataset(torch.randn(512, 8), torch.randn(512, 1))
loader = DataLoader(data, batch_size=8, sampler=DistributedSampler(data))
model = DDP(nn.Linear(8, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
accumulation = 4

for epoch in range(100):
    loader.sampler.set_epoch(epoch)
    for i, (x, y) in enumerate(loader):
        stepping = (i + 1) % accumulation == 0
        with contextlib.nullcontext() if stepping else model.no_sync():
            loss = nn.functional.mse_loss(model(x), y) / accumulation
            loss.backward()
        if stepping:
            optimizer.step()
            optimizer.zero_grad()
