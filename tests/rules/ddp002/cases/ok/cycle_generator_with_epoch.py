import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def forever(loader, sampler):
    epoch = 0
    while True:
        sampler.set_epoch(epoch)
        yield from loader
        epoch += 1


dist.init_process_group("nccl"); torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())
ds = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))
sampler = DistributedSampler(ds)
loader = DataLoader(ds, batch_size=64, sampler=sampler)
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(16, 1).cuda())
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step, (x, y) in zip(range(20_000), forever(loader, sampler)):
    opt.zero_grad()
    torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
    opt.step()
