import os
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, TensorDataset

dist.init_process_group("nccl")
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
loader_kwargs = {"batch_size": 64, "num_workers": 4, "pin_memory": True}
loader_kwargs.update(shuffle=True, drop_last=True)
ds = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))
loader = DataLoader(ds, **loader_kwargs)  # <- DDP001
model = torch.nn.Linear(16, 1).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    for x, y in loader:
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
        opt.step()
