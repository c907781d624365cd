import os
import numpy as np
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, Subset, TensorDataset

dist.init_process_group("nccl")
rank, world_size = dist.get_rank(), dist.get_world_size()
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
full = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))
perm = np.random.default_rng(0).permutation(len(full))
my_indices = np.array_split(perm, world_size)[rank].tolist()
train_set = Subset(full, my_indices)
train_loader = DataLoader(train_set, batch_size=64, shuffle=True)

model = torch.nn.Linear(16, 1).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    for x, y in train_loader:
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
        opt.step()
