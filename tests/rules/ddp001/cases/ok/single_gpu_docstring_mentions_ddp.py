"""Single-GPU baseline.

The multi-GPU version of this script calls dist.init_process_group("nccl"),
reads LOCAL_RANK / WORLD_SIZE and wraps the model in DistributedDataParallel;
see train_ddp.py.  This one deliberately does not.
"""
import torch
from torch.utils.data import DataLoader, TensorDataset

# NOTE: do not call torch.distributed.init_process_group here
train_loader = DataLoader(TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1)),
                          batch_size=64, shuffle=True)
model = torch.nn.Linear(16, 1).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    for x, y in train_loader:
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
        opt.step()
