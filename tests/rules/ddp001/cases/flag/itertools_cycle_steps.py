import itertools
import os
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, TensorDataset

dist.init_process_group("nccl"); torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())
local_rank = int(os.environ["LOCAL_RANK"])
ds = TensorDataset(torch.randn(8192, 32), torch.randn(8192, 1))
loader = DataLoader(ds, batch_size=64, shuffle=True, drop_last=True)  # <- DDP001
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(32, 1).cuda(local_rank), device_ids=[local_rank])
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step, (x, y) in enumerate(itertools.islice(itertools.cycle(loader), 10_000)):
    opt.zero_grad()
    torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
    opt.step()
