import os
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group("nccl")
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
ds = TensorDataset(torch.randn(8192, 16), torch.randn(8192, 1))
train_sampler = DistributedSampler(ds, shuffle=True, drop_last=True)
train_loader = DataLoader(ds, batch_size=8, sampler=train_sampler, pin_memory=True)
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(16, 1).cuda())
opt = torch.optim.AdamW(model.parameters())
for epoch in range(3):  # <- DDP002
    for i, (x, y) in enumerate(train_loader):
        (torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()) / 8).backward()  # <- DDP015
        if (i + 1) % 8 == 0:
            opt.step()
            opt.zero_grad(set_to_none=True)
