import os
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group("nccl")
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
train_ds = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))
val_ds = TensorDataset(torch.randn(512, 16), torch.randn(512, 1))
sampler = DistributedSampler(train_ds)
train_loader = DataLoader(train_ds, batch_size=64, sampler=sampler)
val_loader = DataLoader(val_ds, batch_size=256, num_workers=2)
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(16, 1).cuda())
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    sampler.set_epoch(epoch)
    model.train()
    for x, y in train_loader:
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        val = sum(torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).item() for x, y in val_loader)
