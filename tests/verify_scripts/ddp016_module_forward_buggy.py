"""DDP016 on 2 CPU ranks: the training forward goes through model.module, so DDP never all-reduces."""

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
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

for epoch in range(100):
    loader.sampler.set_epoch(epoch)
    for x, y in loader:
        loss = nn.functional.mse_loss(model.module(x), y)  # <- DDP016
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
