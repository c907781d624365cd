import os
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


@torch.no_grad()
def evaluate(model, loader):
    total = torch.zeros(2, device="cuda")
    for x, y in loader:
        total += torch.stack([torch.nn.functional.mse_loss(model(x.cuda()), y.cuda(), reduction="sum"),
                              torch.tensor(float(len(x)), device="cuda")])
    dist.all_reduce(total)
    return (total[0] / total[1]).item()


dist.init_process_group("nccl")
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
train_ds = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))
val_ds = TensorDataset(torch.randn(1024, 16), torch.randn(1024, 1))
train_sampler = DistributedSampler(train_ds)
train_loader = DataLoader(train_ds, batch_size=64, sampler=train_sampler)
val_loader = DataLoader(val_ds, batch_size=64, sampler=DistributedSampler(val_ds))
model = torch.nn.Linear(16, 1).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    train_sampler.set_epoch(epoch)
    for x, y in train_loader:
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
        opt.step()
    print(epoch, evaluate(model, val_loader))
