"""DDP014 on 2 CPU ranks: accuracy over this rank's DistributedSampler shard, printed unreduced."""

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group("gloo")
torch.manual_seed(0)
train = TensorDataset(torch.randn(256, 8), torch.randint(0, 2, (256,)))
test = TensorDataset(torch.randn(128, 8), torch.randint(0, 2, (128,)))
train_loader = DataLoader(train, batch_size=8, sampler=DistributedSampler(train))
test_loader = DataLoader(test, batch_size=8, sampler=DistributedSampler(test, shuffle=False))
model = DDP(nn.Linear(8, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)


def evaluate():
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for x, y in test_loader:
            correct += (model(x).argmax(1) == y).sum().item()
            total += y.numel()
    print(f"accuracy {correct / total:.3f}")  # <- DDP014
    model.train()


for epoch in range(100):
    train_loader.sampler.set_epoch(epoch)
    for x, y in train_loader:
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    evaluate()
