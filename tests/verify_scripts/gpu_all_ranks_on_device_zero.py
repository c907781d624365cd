"""Every rank computes on cuda:0 (the classic bug of forgetting torch.cuda.set_device(local_rank)).

gloo, not nccl: NCCL refuses two ranks on one device, while gloo reduces CUDA tensors through
host memory, so this runs on a single GPU too, which is what makes the bug easy to miss.
"""
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group("gloo")
device = torch.device("cuda")  # BUG: the current device, cuda:0, on every rank
data = TensorDataset(torch.randn(2048, 64), torch.randn(2048, 1))
loader = DataLoader(data, batch_size=64, sampler=DistributedSampler(data))
model = DDP(nn.Sequential(nn.Linear(64, 1024), nn.ReLU(), nn.Linear(1024, 1)).to(device))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for epoch in range(100):
    loader.sampler.set_epoch(epoch)
    for x, y in loader:
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x.to(device)), y.to(device)).backward()
        optimizer.step()
