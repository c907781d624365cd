import os
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Trainer:
    def __init__(self, model, dataset, batch_size=64):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=0.1)
        self.sampler = DistributedSampler(dataset)
        self.loader = DataLoader(dataset, batch_size=batch_size, sampler=self.sampler)

    def fit(self, epochs):
        for epoch in range(epochs):
            self.sampler.set_epoch(epoch)
            for x, y in self.loader:
                loss = (self.model(x.cuda()) - y.cuda()).pow(2).mean()
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()


if __name__ == "__main__":
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    ds = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))
    Trainer(torch.nn.Linear(16, 1).cuda(), ds).fit(10)
