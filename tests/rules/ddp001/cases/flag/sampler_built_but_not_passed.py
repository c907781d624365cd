import os
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group("nccl")
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
train_set = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))
train_sampler = DistributedSampler(train_set)
train_loader = DataLoader(train_set, batch_size=64, shuffle=True, num_workers=4)  # <- DDP001
model = torch.nn.Linear(16, 1).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    train_sampler.set_epoch(epoch)
    for x, y in train_loader:
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
        opt.step()
