import os
from dataclasses import dataclass, asdict
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


@dataclass
class LoaderConfig:
    batch_size: int = 64
    num_workers: int = 4
    pin_memory: bool = True
    drop_last: bool = True


def build_train_loader(dataset, cfg: LoaderConfig):
    sampler = DistributedSampler(dataset, seed=1234)
    return DataLoader(dataset, sampler=sampler, **asdict(cfg))


dist.init_process_group("nccl")
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
train_set = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))
train_loader = build_train_loader(train_set, LoaderConfig())
model = torch.nn.Linear(16, 1).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    train_loader.sampler.set_epoch(epoch)
    for x, y in train_loader:
        loss = (model(x.cuda()) - y.cuda()).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
