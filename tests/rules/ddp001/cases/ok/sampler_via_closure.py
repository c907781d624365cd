import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def loader_factory(rank, world):
    def build(ds, bs):
        s = DistributedSampler(ds, num_replicas=world, rank=rank)
        return DataLoader(ds, batch_size=bs, sampler=s), s
    return build


dist.init_process_group("nccl"); torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())
build = loader_factory(dist.get_rank(), dist.get_world_size())
ds = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))
train_loader, sampler = build(ds, 64)
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(16, 1).cuda())
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(5):
    sampler.set_epoch(epoch)
    for x, y in train_loader:
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
        opt.step()
