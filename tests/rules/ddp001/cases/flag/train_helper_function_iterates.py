import os
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, TensorDataset


def train_one_epoch(model, data, opt):
    for x, y in data:
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
        opt.step()


dist.init_process_group("nccl")
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
ds = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))
dl = DataLoader(ds, batch_size=64, num_workers=4)  # <- DDP001
model = torch.nn.Linear(16, 1).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    train_one_epoch(model, dl, opt)
