import os
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset
from tqdm import trange

dist.init_process_group("nccl")
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
ds = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))
train_loader = DataLoader(ds, batch_size=64, sampler=DistributedSampler(ds))
model = torch.nn.Linear(16, 1).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)


def step(x, y):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
    loss.backward()
    opt.step()
    return loss.item()


for epoch in trange(10, disable=dist.get_rank() != 0):  # <- DDP002
    losses = [step(x, y) for x, y in train_loader]
    print(sum(losses) / len(losses))
