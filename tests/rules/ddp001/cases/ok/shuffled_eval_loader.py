import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset
import horovod.torch as hvd

hvd.init()
full = TensorDataset(torch.randn(1000, 8), torch.randint(0, 3, (1000,)))
train_set, test_set = torch.utils.data.random_split(full, [950, 50])
sampler = DistributedSampler(train_set, num_replicas=hvd.size(), rank=hvd.rank())
train_loader = DataLoader(train_set, batch_size=32, sampler=sampler)
test_loader = DataLoader(test_set, batch_size=32, shuffle=True)
model = torch.nn.Linear(8, 3)
optimizer = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.1))
for epoch in range(5):
    sampler.set_epoch(epoch)
    for x, y in train_loader:
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
    correct = 0
    for x, y in test_loader:                      # eval only: no backward/step
        correct += (model(x).argmax(1) == y).sum().item()
    print(epoch, correct / len(test_set))
