import os
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group("nccl")
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
src = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))
tgt = TensorDataset(torch.randn(2048, 16), torch.randn(2048, 1))
src_sampler, tgt_sampler = DistributedSampler(src), DistributedSampler(tgt)
src_loader = DataLoader(src, batch_size=64, sampler=src_sampler)
tgt_loader = DataLoader(tgt, batch_size=32, sampler=tgt_sampler)
model = torch.nn.Linear(16, 1).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    for s in (src_sampler, tgt_sampler):
        s.set_epoch(epoch)
    for (xs, ys), (xt, yt) in zip(src_loader, tgt_loader):
        loss = torch.nn.functional.mse_loss(model(xs.cuda()), ys.cuda()) + model(xt.cuda()).var()
        opt.zero_grad()
        loss.backward()
        opt.step()
