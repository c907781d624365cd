"""A GPU script whose loader decodes every item in the training process (num_workers=0): each
item takes 1 ms to "decode", so the GPU would wait for data most of every step (DDP012)."""
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler


class DecodedImages(Dataset):
    def __len__(self):
        return 4096

    def __getitem__(self, index):
        time.sleep(0.001)  # stands for JPEG decoding and augmentation
        return torch.full((16,), float(index % 7)), torch.tensor([float(index % 3)])


local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
dataset = DecodedImages()
sampler = DistributedSampler(dataset)
loader = DataLoader(dataset, batch_size=16, sampler=sampler)
model = DDP(nn.Linear(16, 1).cuda(), device_ids=[local_rank])
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for epoch in range(100):
    sampler.set_epoch(epoch)
    for x, y in loader:
        loss = nn.functional.mse_loss(model(x.cuda(non_blocking=True)), y.cuda(non_blocking=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
