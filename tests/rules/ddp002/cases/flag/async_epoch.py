import asyncio
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


async def fit(model, opt, loader, epochs):
    for epoch in range(epochs):  # <- DDP002
        for x, y in loader:
            opt.zero_grad()
            torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
            opt.step()
        await asyncio.sleep(0)


dist.init_process_group("nccl"); torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())
ds = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))
loader = DataLoader(ds, batch_size=64, sampler=DistributedSampler(ds))
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(16, 1).cuda())
asyncio.run(fit(model, torch.optim.SGD(model.parameters(), lr=0.1), loader, 10))
