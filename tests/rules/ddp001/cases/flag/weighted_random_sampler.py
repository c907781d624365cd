import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset, WeightedRandomSampler

dist.init_process_group("nccl")
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
labels = torch.randint(0, 2, (8000,))
ds = TensorDataset(torch.randn(8000, 16), labels)
weights = torch.where(labels == 1, 10.0, 1.0)
sampler = WeightedRandomSampler(weights, num_samples=len(ds), replacement=True)
train_loader = DataLoader(ds, batch_size=64, sampler=sampler)  # <- DDP001
model = DDP(torch.nn.Linear(16, 2).cuda(), device_ids=[local_rank])
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    for x, y in train_loader:
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda()).backward()
        opt.step()
