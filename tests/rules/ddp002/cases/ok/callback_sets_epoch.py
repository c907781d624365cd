import os
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class SamplerEpochCallback:
    def __init__(self, sampler):
        self.sampler = sampler

    def on_epoch_start(self, epoch):
        self.sampler.set_epoch(epoch)


dist.init_process_group("nccl")
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
ds = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))
sampler = DistributedSampler(ds)
loader = DataLoader(ds, batch_size=64, sampler=sampler)
callbacks = [SamplerEpochCallback(sampler)]
model = torch.nn.Linear(16, 1).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    for cb in callbacks:
        cb.on_epoch_start(epoch)
    for x, y in loader:
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
        opt.step()
