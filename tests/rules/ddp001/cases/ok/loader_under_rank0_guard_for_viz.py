import os
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group("nccl")
rank = dist.get_rank()
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
train_ds = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))
sampler = DistributedSampler(train_ds)
train_loader = DataLoader(train_ds, batch_size=64, sampler=sampler)
model = torch.nn.Linear(16, 1).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    sampler.set_epoch(epoch)
    for x, y in train_loader:
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
        opt.step()
    if rank == 0:
        preview_loader = DataLoader(train_ds, batch_size=8, shuffle=True)
        x, y = next(iter(preview_loader))
        print("sample predictions", model(x.cuda()).squeeze().tolist())
