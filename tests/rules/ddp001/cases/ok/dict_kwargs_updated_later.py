import os
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group("nccl")
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)

train_set = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))
loader_kwargs = dict(batch_size=64, num_workers=4, pin_memory=True)
sampler = DistributedSampler(train_set)
loader_kwargs["sampler"] = sampler
train_loader = DataLoader(train_set, **loader_kwargs)

model = torch.nn.Linear(16, 1).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    sampler.set_epoch(epoch)
    for x, y in train_loader:
        loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
        opt.zero_grad()
        loss.backward()
        opt.step()
