import argparse
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, RandomSampler, TensorDataset
from torch.utils.data.distributed import DistributedSampler

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
args = parser.parse_args()
if args.local_rank != -1:
    torch.cuda.set_device(args.local_rank)
    dist.init_process_group(backend="nccl")

train_dataset = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))
train_sampler = RandomSampler(train_dataset) if args.local_rank == -1 else DistributedSampler(train_dataset)
train_dataloader = DataLoader(train_dataset, sampler=train_sampler, batch_size=32)
model = torch.nn.Linear(16, 1).cuda()
optimizer = torch.optim.AdamW(model.parameters())
for epoch in range(3):
    if args.local_rank != -1:
        train_sampler.set_epoch(epoch)
    for x, y in train_dataloader:
        loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
