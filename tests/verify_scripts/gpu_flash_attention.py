"""A GPU script that calls flash attention (a CUDA-only kernel) in its forward pass."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from flash_attn import flash_attn_func
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(16, 48)

    def forward(self, x):
        q, k, v = self.qkv(x).view(x.shape[0], 1, 3, 1, 16).unbind(dim=2)
        return flash_attn_func(q.half(), k.half(), v.half()).float().sum()


local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
dataset = TensorDataset(torch.randn(64, 16))
loader = DataLoader(dataset, batch_size=8, sampler=DistributedSampler(dataset))
model = DDP(Attention().cuda(), device_ids=[local_rank])
for (x,) in loader:
    model(x.cuda()).backward()
