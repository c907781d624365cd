import os
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, SubsetRandomSampler, TensorDataset

dist.init_process_group("nccl")
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
ds = TensorDataset(torch.randn(5000, 16), torch.randn(5000, 1))
n_train = int(0.9 * len(ds))
train_loader = DataLoader(ds, batch_size=64, sampler=SubsetRandomSampler(range(n_train)))  # <- DDP001
model = torch.nn.Linear(16, 1).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    for x, y in train_loader:
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
        opt.step()
