import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset

dist.init_process_group("nccl")
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
splits = {"train": TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1)),
          "val": TensorDataset(torch.randn(512, 16), torch.randn(512, 1))}
loaders = {
    name: DataLoader(ds, batch_size=64, shuffle=(name == "train"))  # <- DDP001
    for name, ds in splits.items()
}
model = DDP(torch.nn.Linear(16, 1).cuda(), device_ids=[local_rank])
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    for x, y in loaders["train"]:
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
        opt.step()
