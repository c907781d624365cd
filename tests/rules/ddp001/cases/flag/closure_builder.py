import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, TensorDataset


def make_trainer(ds, model, opt):
    def run(epochs):
        loader = DataLoader(ds, batch_size=64, shuffle=True)  # <- DDP001
        for _ in range(epochs):
            for x, y in loader:
                opt.zero_grad()
                model(x).sum().backward()
                opt.step()
    return run


dist.init_process_group("gloo")
ds = TensorDataset(torch.randn(1000, 4), torch.randn(1000, 1))
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 1))
make_trainer(ds, model, torch.optim.SGD(model.parameters(), lr=0.1))(3)
