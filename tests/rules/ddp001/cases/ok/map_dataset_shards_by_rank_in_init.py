import glob
import os
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, Dataset


class RankShardedNpy(Dataset):
    """Each rank only sees its own files; shuffling within the shard is fine."""

    def __init__(self, pattern, rank, world_size):
        self.files = sorted(glob.glob(pattern))[rank::world_size]

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        return torch.load(self.files[i])


dist.init_process_group("nccl")
rank, world_size = dist.get_rank(), dist.get_world_size()
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
train_loader = DataLoader(RankShardedNpy("/data/train/*.pt", rank, world_size), batch_size=32, shuffle=True)
model = torch.nn.Linear(16, 1).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    for x, y in train_loader:
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
        opt.step()
