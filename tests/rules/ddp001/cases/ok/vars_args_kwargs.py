import argparse
import os
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

parser = argparse.ArgumentParser()
parser.add_argument("--batch_size", type=int, default=64)
parser.add_argument("--num_workers", type=int, default=4)
loader_args = parser.parse_args()

dist.init_process_group("nccl")
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
train_set = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))
sampler = DistributedSampler(train_set)
train_loader = DataLoader(train_set, **{**vars(loader_args), "sampler": sampler})

model = torch.nn.Linear(16, 1).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    sampler.set_epoch(epoch)
    for x, y in train_loader:
        opt.zero_grad()
        (model(x.cuda()) - y.cuda()).pow(2).mean().backward()
        opt.step()
