import os
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Trainer:
    def __init__(self, model, dataset):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=0.1)
        self.loader = DataLoader(dataset, batch_size=64, sampler=DistributedSampler(dataset))

    def fit(self, epochs):
        for epoch in range(epochs):  # <- DDP002
            for x, y in self.loader:
                self.opt.zero_grad()
                torch.nn.functional.mse_loss(self.model(x.cuda()), y.cuda()).backward()
                self.opt.step()


dist.init_process_group("nccl")
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
Trainer(torch.nn.Linear(16, 1).cuda(), TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))).fit(10)
