import os
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Trainer:
    def __init__(self, model, train_set):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=0.1)
        self.train_loader = DataLoader(train_set, batch_size=64, sampler=DistributedSampler(train_set))

    def _run_epoch(self, epoch):
        self.train_loader.sampler.set_epoch(epoch)
        for x, y in self.train_loader:
            self.opt.zero_grad()
            torch.nn.functional.mse_loss(self.model(x.cuda()), y.cuda()).backward()
            self.opt.step()

    def train(self, max_epochs):
        for epoch in range(max_epochs):
            self._run_epoch(epoch)


dist.init_process_group("nccl")
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
Trainer(torch.nn.Linear(16, 1).cuda(), TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))).train(10)
