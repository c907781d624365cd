import torch
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def get_loaders(dataset, batch_size):
    sampler = DistributedSampler(dataset)
    return DataLoader(dataset, batch_size=batch_size, sampler=sampler)


def smoke_test():
    """Single-process sanity check, run as `python this_module.py`."""
    dataset = TensorDataset(torch.arange(16))
    train_loader = DataLoader(dataset, batch_size=4, shuffle=True)
    for i, batch in enumerate(train_loader):
        if i >= 2:
            break
        print(batch[0].shape)


if __name__ == "__main__":
    smoke_test()
