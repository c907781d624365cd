import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


def train(model, optimizer, base_dataset, epochs):
    for epoch in range(epochs):
        # every rank reshuffles the HF dataset with the same per-epoch seed ...
        ds = base_dataset.shuffle(seed=epoch)
        # ... and builds a fresh sampler; its fixed (epoch-0) permutation is applied
        # to a different underlying order each epoch, so batches do change
        loader = DataLoader(ds, batch_size=8, sampler=DistributedSampler(ds, shuffle=True))
        for batch in loader:
            loss = model(**batch).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()


if __name__ == "__main__":
    dist.init_process_group("nccl")
