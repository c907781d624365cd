import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, TensorDataset

dist.init_process_group("nccl"); torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())
train_ds = TensorDataset(torch.randn(4096, 16), torch.randint(0, 10, (4096,)))
val_ds = TensorDataset(torch.randn(512, 16), torch.randint(0, 10, (512,)))
loaders = (
    DataLoader(train_ds, batch_size=128, shuffle=True),  # <- DDP001
    DataLoader(val_ds, batch_size=256),
)
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(16, 10).cuda())
opt = torch.optim.Adam(model.parameters())
train_loader, val_loader = loaders
for epoch in range(10):
    for x, y in train_loader:
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda()).backward()
        opt.step()
