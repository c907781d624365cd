import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group("nccl"); torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())
ds = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))
sampler = DistributedSampler(ds)
loader = DataLoader(ds, batch_size=64, sampler=sampler)
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(16, 1).cuda())
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    match epoch % 2:
        case 0:
            sampler.set_epoch(epoch)
        case _:
            sampler.set_epoch(epoch)
    for x, y in loader:
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
        opt.step()
