"""A pretraining token stream over many files: shuffles the file list, never splits it."""

import glob
import random

import numpy as np
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, IterableDataset


class TokenFileStream(IterableDataset):
    def __init__(self, pattern, seq_len, seed=0):
        self.files = sorted(glob.glob(pattern))
        self.seq_len = seq_len
        self.seed = seed

    def _chunks(self, path):
        tokens = np.fromfile(path, dtype=np.uint16)
        for start in range(0, len(tokens) - self.seq_len - 1, self.seq_len):
            piece = torch.from_numpy(tokens[start:start + self.seq_len + 1].astype(np.int64))
            yield piece[:-1], piece[1:]

    def __iter__(self):
        files = list(self.files)
        random.Random(self.seed).shuffle(files)
        for path in files:
            yield from self._chunks(path)


def main(model, optimizer, local_rank):
    dist.init_process_group("nccl")
    torch.cuda.set_device(local_rank)
    train_stream = TokenFileStream("data/tokens_*.bin", seq_len=1024)
    train_loader = DataLoader(train_stream, batch_size=8, num_workers=4, pin_memory=True)  # <- DDP009
    for step, (x, y) in enumerate(train_loader):
        loss = model(x.cuda(non_blocking=True), y.cuda(non_blocking=True))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
