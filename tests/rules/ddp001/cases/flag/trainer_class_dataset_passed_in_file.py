import os
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, TensorDataset


class Trainer:
    def __init__(self, model, train_set):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=0.1)
        self.loader = DataLoader(train_set, batch_size=64, shuffle=True)  # <- DDP001

    def train(self, epochs):
        for epoch in range(epochs):
            for x, y in self.loader:
                self.opt.zero_grad()
                torch.nn.functional.mse_loss(self.model(x.cuda()), y.cuda()).backward()
                self.opt.step()


if __name__ == "__main__":
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    train_set = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))
    Trainer(torch.nn.Linear(16, 1).cuda(), train_set).train(10)
