import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.utils.data import DataLoader, TensorDataset


def run(rank, world_size):
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    ds = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))
    loader = DataLoader(ds, batch_size=64, shuffle=True)  # <- DDP001
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(16, 1).cuda(rank), device_ids=[rank])
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(10):
        for x, y in loader:
            opt.zero_grad()
            torch.nn.functional.mse_loss(model(x.cuda(rank)), y.cuda(rank)).backward()
            opt.step()


if __name__ == "__main__":
    mp.spawn(run, args=(torch.cuda.device_count(),), nprocs=torch.cuda.device_count(), join=True)
