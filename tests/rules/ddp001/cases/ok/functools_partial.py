import functools
import os
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

dist.init_process_group("nccl")
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))

train_set = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))
sampler = DistributedSampler(train_set, shuffle=True)
make_loader = functools.partial(DataLoader, sampler=sampler, num_workers=4, pin_memory=True)
train_loader = make_loader(train_set, batch_size=64)

model = torch.nn.Linear(16, 1).cuda()
opt = torch.optim.AdamW(model.parameters())
for epoch in range(5):
    sampler.set_epoch(epoch)
    for x, y in train_loader:
        loss = (model(x.cuda()) - y.cuda()).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
