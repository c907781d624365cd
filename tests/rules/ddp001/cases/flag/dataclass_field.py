from dataclasses import dataclass
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, TensorDataset


@dataclass
class Data:
    train: DataLoader
    val: DataLoader


dist.init_process_group("nccl"); torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())
ds = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))
data = Data(
    train=DataLoader(ds, batch_size=64, shuffle=True),  # <- DDP001
    val=DataLoader(ds, batch_size=64),
)
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(16, 1).cuda())
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for epoch in range(5):
    for x, y in data.train:
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
        opt.step()
