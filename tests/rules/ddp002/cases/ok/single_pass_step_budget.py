import os
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group("nccl")
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
ds = TensorDataset(torch.randn(100_000, 16), torch.randn(100_000, 1))
loader = DataLoader(ds, batch_size=64, sampler=DistributedSampler(ds, seed=17))
model = torch.nn.Linear(16, 1).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
# a single pass over the data (LLM-style pretraining: one epoch only)
for step, (x, y) in enumerate(loader):
    opt.zero_grad()
    torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
    opt.step()
    if step == 1000:
        break
