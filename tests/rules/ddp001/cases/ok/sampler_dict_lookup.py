import os
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group("nccl")
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
splits = {
    "train": TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1)),
    "val": TensorDataset(torch.randn(512, 16), torch.randn(512, 1)),
}
samplers = {name: DistributedSampler(ds, shuffle=(name == "train")) for name, ds in splits.items()}
loaders = {
    name: DataLoader(ds, batch_size=64, sampler=samplers[name], num_workers=4)
    for name, ds in splits.items()
}
model = torch.nn.Linear(16, 1).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    samplers["train"].set_epoch(epoch)
    for x, y in loaders["train"]:
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
        opt.step()
