import functools
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def timed(fn):
    @functools.wraps(fn)
    def wrapper(*a, **kw):
        return fn(*a, **kw)
    return wrapper


@timed
def train_one_epoch(model, opt, loader):
    for x, y in loader:
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
        opt.step()


dist.init_process_group("nccl"); torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())
ds = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))
train_loader = DataLoader(ds, batch_size=64, sampler=DistributedSampler(ds))
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(16, 1).cuda())
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):  # <- DDP002
    train_one_epoch(model, opt, train_loader)
