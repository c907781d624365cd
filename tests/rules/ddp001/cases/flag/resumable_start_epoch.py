import os
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, TensorDataset

dist.init_process_group("nccl"); torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())
local_rank = int(os.environ["LOCAL_RANK"])
ds = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(16, 1).cuda(local_rank))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
start_epoch = 0
if os.path.exists("ckpt.pt"):
    ckpt = torch.load("ckpt.pt", map_location=f"cuda:{local_rank}")
    model.module.load_state_dict(ckpt["model"])
    start_epoch = ckpt["epoch"] + 1
train_loader = DataLoader(ds, batch_size=64, shuffle=True)  # <- DDP001
for epoch in range(start_epoch, 90):
    for x, y in train_loader:
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
        opt.step()
