"""`MNIST(root, download=True)`: when its files are missing, writes them in chunks (a download,
then an extraction), slowly enough that ranks started together overlap."""

import os
import time

import torch
from torch.utils.data import TensorDataset

FILES = ("train-images-idx3-ubyte.gz", "train-images-idx3-ubyte", "train-labels-idx1-ubyte")


class MNIST(TensorDataset):
    def __init__(self, root, train=True, download=False):
        folder = os.path.join(root, "MNIST", "raw")
        if download and not all(os.path.exists(os.path.join(folder, name)) for name in FILES):
            os.makedirs(folder, exist_ok=True)
            for name in FILES:
                with open(os.path.join(folder, name), "wb") as handle:
                    for _ in range(5):
                        handle.write(os.urandom(1024))
                        handle.flush()
                        time.sleep(0.05)
        generator = torch.Generator().manual_seed(0)
        super().__init__(torch.randn(256, 8, generator=generator), torch.randn(256, 1, generator=generator))
