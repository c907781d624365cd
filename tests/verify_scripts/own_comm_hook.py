"""A torchrun script that registers its own DDP communication hook (fp16 compression): verify's
bucket timing must leave it working (DDP accepts a single hook per model)."""
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group("gloo")
data = TensorDataset(torch.randn(512, 8), torch.randn(512, 1))
loader = DataLoader(data, batch_size=16, sampler=DistributedSampler(data))
model = DDP(nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1)))
compressed = []


def counting_fp16_hook(state, bucket):
    compressed.append(bucket.index())
    return default_hooks.fp16_compress_hook(state, bucket)


model.register_comm_hook(None, counting_fp16_hook)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for epoch in range(100):
    loader.sampler.set_epoch(epoch)
    for x, y in loader:
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
        print(f"compressed buckets: {len(compressed)}", flush=True)
