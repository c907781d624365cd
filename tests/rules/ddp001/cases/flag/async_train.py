import asyncio
import os
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, TensorDataset
from torch.nn.parallel import DistributedDataParallel as DDP


async def train(model, opt):
    ds = TensorDataset(torch.randn(2048, 8), torch.randn(2048, 1))
    loader = DataLoader(ds, batch_size=32, shuffle=True)  # <- DDP001
    for epoch in range(5):
        for x, y in loader:
            opt.zero_grad()
            torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
            opt.step()
            await asyncio.sleep(0)


dist.init_process_group("nccl")
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
model = DDP(torch.nn.Linear(8, 1).cuda())
asyncio.run(train(model, torch.optim.SGD(model.parameters(), lr=0.1)))
