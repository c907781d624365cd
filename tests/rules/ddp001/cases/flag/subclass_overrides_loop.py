import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, TensorDataset


class BaseTrainer:
    def __init__(self, model, opt):
        self.model, self.opt = model, opt

    def fit(self, epochs):
        for epoch in range(epochs):
            self.train_epoch(epoch)


class RegressionTrainer(BaseTrainer):
    def train_epoch(self, epoch):
        for x, y in self.loader:
            self.opt.zero_grad()
            torch.nn.functional.mse_loss(self.model(x), y).backward()
            self.opt.step()


dist.init_process_group("gloo")
ds = TensorDataset(torch.randn(1000, 4), torch.randn(1000, 1))
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 1))
trainer = RegressionTrainer(model, torch.optim.SGD(model.parameters(), lr=0.1))
trainer.loader = DataLoader(ds, batch_size=32, shuffle=True)  # <- DDP001
trainer.fit(5)
