import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group("nccl")
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
train_ds = TensorDataset(torch.randn(4096, 16), torch.randint(0, 10, (4096,)))
test_ds = TensorDataset(torch.randn(1000, 16), torch.randint(0, 10, (1000,)))
sampler = DistributedSampler(train_ds)
train_loader = DataLoader(train_ds, batch_size=64, sampler=sampler)
test_loader = DataLoader(test_ds, batch_size=500)
model = DDP(torch.nn.Linear(16, 10).cuda(), device_ids=[local_rank])
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    sampler.set_epoch(epoch)
    for x, y in train_loader:
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda()).backward()
        opt.step()
    with torch.no_grad():
        correct = sum((model(x.cuda()).argmax(1) == y.cuda()).sum().item() for x, y in test_loader)
    print(f"rank {dist.get_rank()} epoch {epoch} acc {correct / len(test_ds):.3f}")
