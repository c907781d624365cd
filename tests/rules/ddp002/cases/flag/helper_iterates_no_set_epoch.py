import os
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def train_one_epoch(model, loader, optimizer):
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
        optimizer.step()


def main():
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    ds = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))
    loader = DataLoader(ds, batch_size=64, sampler=DistributedSampler(ds), num_workers=4)
    model = torch.nn.Linear(16, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(1, 11):  # <- DDP002
        train_one_epoch(model, loader, optimizer)


if __name__ == "__main__":
    main()
