import os
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

world_size = int(os.environ.get("WORLD_SIZE", "1"))
ds = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))
if world_size > 1:
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    sampler = DistributedSampler(ds)
    train_loader = DataLoader(ds, batch_size=64, sampler=sampler)
else:
    sampler = None
    train_loader = DataLoader(ds, batch_size=64, shuffle=True)

model = torch.nn.Linear(16, 1).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    if sampler is not None:
        sampler.set_epoch(epoch)
    for x, y in train_loader:
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
        opt.step()
