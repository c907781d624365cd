"""Both ranks draw a few batches; then rank 1 leaves with sys.exit(0) while rank 0 crashes."""
import sys

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group("gloo")
rank = dist.get_rank()
dataset = TensorDataset(torch.randn(512, 4))
loader = DataLoader(dataset, batch_size=8, sampler=DistributedSampler(dataset))
for step, _batch in enumerate(loader, 1):
    if step == 3:
        if rank == 0:
            raise RuntimeError("loss is NaN at step 3")
        sys.exit(0)
