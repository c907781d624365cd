import os
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group("nccl")
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
ds = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))
loader = DataLoader(ds, batch_size=64, sampler=DistributedSampler(ds))
model = torch.nn.Linear(16, 1).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    getattr(loader.sampler, "set_epoch", lambda _: None)(epoch)
    for x, y in loader:
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
        opt.step()
