import os
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, TensorDataset
from torch.nn.parallel import DistributedDataParallel as DDP

ACCUM = 4
dist.init_process_group("nccl"); torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())
local_rank = int(os.environ["LOCAL_RANK"])
ds = TensorDataset(torch.randn(8192, 32), torch.randn(8192, 1))
loader = DataLoader(ds, batch_size=16)  # <- DDP001
model = DDP(torch.nn.Linear(32, 1).cuda(local_rank), device_ids=[local_rank])
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for epoch in range(3):
    for i, (x, y) in enumerate(loader):
        loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()) / ACCUM
        loss.backward()  # <- DDP015
        if (i + 1) % ACCUM == 0:
            opt.step()
            opt.zero_grad()
