import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group("nccl"); torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())
short = TensorDataset(torch.randn(2048, 8), torch.randn(2048, 1))
long = TensorDataset(torch.randn(8192, 8), torch.randn(8192, 1))
short_sampler, long_sampler = DistributedSampler(short), DistributedSampler(long)
short_loader = DataLoader(short, batch_size=64, sampler=short_sampler)
long_loader = DataLoader(long, batch_size=64, sampler=long_sampler)
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 1).cuda())
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(20):  # <- DDP002
    if epoch < 5:
        short_sampler.set_epoch(epoch)
        loader = short_loader
    else:
        loader = long_loader
    for x, y in loader:
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
        opt.step()
