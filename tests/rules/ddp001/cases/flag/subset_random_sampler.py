import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, SubsetRandomSampler, TensorDataset

dist.init_process_group("nccl")
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
ds = TensorDataset(torch.randn(5000, 16), torch.randn(5000, 1))
train_idx = list(range(4500))
train_loader = DataLoader(ds, batch_size=64, sampler=SubsetRandomSampler(train_idx))  # <- DDP001
model = DDP(torch.nn.Linear(16, 1).cuda(), device_ids=[local_rank])
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    for x, y in train_loader:
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
        opt.step()
