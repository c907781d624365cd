import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DP

dist.init_process_group("nccl")
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
model = DP(torch.nn.Linear(16, 1).cuda(), device_ids=[local_rank], output_device=local_rank)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(32, 16, device="cuda")
loss = model(x).pow(2).mean()
loss.backward()
opt.step()
