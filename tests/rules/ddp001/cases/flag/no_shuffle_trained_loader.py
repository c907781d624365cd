"""DDP regression script: the loader sets neither shuffle nor a sampler, which
would be fine for evaluation, but it is trained on (loss.backward()), so every
rank processes the same full, unshuffled dataset."""
import os

import numpy as np
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset


def load_arrays(path):
    blob = np.load(path)
    return torch.from_numpy(blob["features"]).float(), torch.from_numpy(blob["target"]).float()


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)

    x, y = load_arrays("/data/molecules/qm9_train.npz")
    dataset = TensorDataset(x, y)
    data_loader = DataLoader(dataset, batch_size=512, num_workers=2, pin_memory=True)  # <- DDP001

    model = nn.Sequential(nn.Linear(x.shape[1], 512), nn.SiLU(), nn.Linear(512, 512), nn.SiLU(),
                          nn.Linear(512, 1))
    model = DDP(model.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-4)

    for epoch in range(300):
        for features, target in data_loader:
            features, target = features.cuda(non_blocking=True), target.cuda(non_blocking=True)
            loss = nn.functional.l1_loss(model(features).squeeze(-1), target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if epoch % 10 == 0 and dist.get_rank() == 0:
            print(f"epoch {epoch}: MAE {loss.item():.4f}")

    if dist.get_rank() == 0:
        torch.save(model.module.state_dict(), "qm9_mlp.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
