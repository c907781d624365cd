import os
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group("nccl")
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
labeled = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))
unlabeled = TensorDataset(torch.randn(16384, 16))
lab_sampler = DistributedSampler(labeled)
lab_loader = DataLoader(labeled, batch_size=32, sampler=lab_sampler)
unl_loader = DataLoader(unlabeled, batch_size=128, sampler=DistributedSampler(unlabeled))
model = torch.nn.Linear(16, 1).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):  # <- DDP002
    lab_sampler.set_epoch(epoch)
    for (x, y), (u,) in zip(lab_loader, unl_loader):
        loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()) + model(u.cuda()).var()
        opt.zero_grad()
        loss.backward()
        opt.step()
