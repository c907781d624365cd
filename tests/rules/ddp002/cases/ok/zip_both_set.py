import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group("nccl"); torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())
a = TensorDataset(torch.randn(4096, 8))
b = TensorDataset(torch.randn(4096, 8))
samplers = (DistributedSampler(a), DistributedSampler(b))
la = DataLoader(a, batch_size=32, sampler=samplers[0])
lb = DataLoader(b, batch_size=32, sampler=samplers[1])
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 8).cuda())
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    for s in samplers:
        s.set_epoch(epoch)
    for (xa,), (xb,) in zip(la, lb):
        opt.zero_grad()
        (model(xa.cuda()) - model(xb.cuda())).pow(2).mean().backward()
        opt.step()
