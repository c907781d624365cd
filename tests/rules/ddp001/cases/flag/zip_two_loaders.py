import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group("nccl"); torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())
src = TensorDataset(torch.randn(4096, 8))
tgt = TensorDataset(torch.randn(4096, 8))
src_sampler = DistributedSampler(src)
src_loader = DataLoader(src, batch_size=32, sampler=src_sampler)
tgt_loader = DataLoader(tgt, batch_size=32, shuffle=True)  # <- DDP001
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 8).cuda())
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    src_sampler.set_epoch(epoch)
    for (xs,), (xt,) in zip(src_loader, tgt_loader):
        opt.zero_grad()
        (model(xs.cuda()) - model(xt.cuda())).pow(2).mean().backward()
        opt.step()
