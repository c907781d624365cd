import os
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, IterableDataset


class ShardedLines(IterableDataset):
    def __init__(self, files):
        self.files = files

    def __iter__(self):
        rank, world = dist.get_rank(), dist.get_world_size()
        for path in self.files[rank::world]:
            with open(path) as f:
                for line in f:
                    yield torch.tensor([float(v) for v in line.split(",")])


dist.init_process_group("nccl")
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
train_loader = DataLoader(ShardedLines([f"part-{i:05d}.csv" for i in range(256)]), batch_size=128)
model = torch.nn.Linear(16, 1).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for batch in train_loader:
    loss = model(batch[:, :16].cuda()).sub(batch[:, 16:].cuda()).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
