import os
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group("nccl")
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
tasks = {"cls": TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1)),
         "reg": TensorDataset(torch.randn(2048, 16), torch.randn(2048, 1))}
loaders = {k: DataLoader(v, batch_size=64, sampler=DistributedSampler(v)) for k, v in tasks.items()}
model = torch.nn.Linear(16, 1).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    for loader in loaders.values():
        loader.sampler.set_epoch(epoch)
    for task, loader in loaders.items():
        for x, y in loader:
            opt.zero_grad()
            torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
            opt.step()
