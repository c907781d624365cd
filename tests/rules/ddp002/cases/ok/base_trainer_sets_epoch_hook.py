import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class BaseTrainer:
    def __init__(self, model, opt, loader):
        self.model, self.opt, self.loader = model, opt, loader

    def fit(self, epochs):
        for epoch in range(epochs):
            self.loader.sampler.set_epoch(epoch)
            self.train_epoch()


class Trainer(BaseTrainer):
    def train_epoch(self):
        for x, y in self.loader:
            self.opt.zero_grad()
            torch.nn.functional.mse_loss(self.model(x), y).backward()
            self.opt.step()


dist.init_process_group("gloo")
ds = TensorDataset(torch.randn(1000, 4), torch.randn(1000, 1))
loader = DataLoader(ds, batch_size=32, sampler=DistributedSampler(ds))
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 1))
Trainer(model, torch.optim.SGD(model.parameters(), lr=0.1), loader).fit(5)
