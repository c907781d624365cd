"""Correct DDP script that spells every torch import a different way."""
import os

import torch
import torch.utils.data as tud
from torch import distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils import data

from recsys import MovieLensRatings, TwoTower


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)

    train_ds = MovieLensRatings("/data/ml-25m", split="train")
    test_ds = MovieLensRatings("/data/ml-25m", split="test")

    train_sampler = tud.distributed.DistributedSampler(train_ds)
    train_loader = tud.DataLoader(train_ds, batch_size=4096, sampler=train_sampler, num_workers=6)

    test_sampler = data.DistributedSampler(test_ds, shuffle=False)
    test_loader = data.DataLoader(test_ds, batch_size=8192, sampler=test_sampler)

    model = DDP(TwoTower(train_ds.n_users, train_ds.n_items, dim=128).to(device), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)
    mse = nn.MSELoss()

    for epoch in range(20):
        train_sampler.set_epoch(epoch)
        model.train()
        for users, items, ratings in train_loader:
            users, items, ratings = users.to(device), items.to(device), ratings.to(device)
            loss = mse(model(users, items), ratings)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

        model.eval()
        sq_err = torch.zeros(2, device=device)
        with torch.no_grad():
            for users, items, ratings in test_loader:
                pred = model(users.to(device), items.to(device))
                sq_err[0] += ((pred - ratings.to(device)) ** 2).sum()
                sq_err[1] += ratings.numel()
        dist.all_reduce(sq_err)
        if dist.get_rank() == 0:
            print(f"epoch {epoch}: test RMSE {(sq_err[0] / sq_err[1]).sqrt().item():.4f}")

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
