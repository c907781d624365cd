import os
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, TensorDataset

dist.init_process_group("nccl")
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
make_loader = lambda ds, bs: DataLoader(ds, batch_size=bs, shuffle=True, num_workers=4)  # <- DDP001
train_loader = make_loader(TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1)), 64)
model = torch.nn.Linear(16, 1).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    for x, y in train_loader:
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
        opt.step()
