import os
import torch
from torch.utils.data import DataLoader, TensorDataset

world_size = int(os.environ["WORLD_SIZE"])
rank = int(os.environ["RANK"])
torch.distributed.init_process_group("nccl", rank=rank, world_size=world_size); torch.cuda.set_device(torch.distributed.get_rank() % torch.cuda.device_count())
ds = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))
loader = DataLoader(ds, batch_size=64 // world_size, shuffle=True)  # <- DDP001
model = torch.nn.Linear(16, 1).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    for x, y in loader:
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
        opt.step()
