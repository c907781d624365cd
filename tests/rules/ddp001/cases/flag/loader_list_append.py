import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, TensorDataset

dist.init_process_group("nccl"); torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())
tasks = {"a": TensorDataset(torch.randn(1024, 8), torch.randn(1024, 1)),
         "b": TensorDataset(torch.randn(2048, 8), torch.randn(2048, 1))}
train_loaders = []
for name, ds in tasks.items():
    train_loaders.append(DataLoader(ds, batch_size=32, shuffle=True))  # <- DDP001
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 1).cuda())
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    for loader in train_loaders:
        for x, y in loader:
            opt.zero_grad()
            torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
            opt.step()
