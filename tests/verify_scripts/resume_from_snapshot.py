"""A torchrun script for GPUs that resumes: at start-up every rank loads the snapshot an earlier
run saved (without map_location: the tensors go back to the GPU that saved them, rank 0's), and
rank 0 saves a new one after each epoch. SNAPSHOT is the first argument."""
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

snapshot = sys.argv[1]
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
model = nn.Linear(8, 1).to(local_rank)
if os.path.exists(snapshot):
    model.load_state_dict(torch.load(snapshot))  # <- DDP008
model = DDP(model, device_ids=[local_rank])
data = TensorDataset(torch.randn(256, 8), torch.randn(256, 1))
loader = DataLoader(data, batch_size=16, sampler=DistributedSampler(data))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for epoch in range(100):
    loader.sampler.set_epoch(epoch)
    for x, y in loader:
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x.to(local_rank)), y.to(local_rank)).backward()
        optimizer.step()
    if dist.get_rank() == 0:
        torch.save(model.module.state_dict(), snapshot)
