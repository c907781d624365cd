"""The same token stream split the way it should be: by rank in __init__, by worker in __iter__;
plus a MosaicML StreamingDataset, which partitions itself."""

import itertools
import os

import numpy as np
import torch
import torch.distributed as dist
from streaming import StreamingDataset
from torch.utils.data import DataLoader, IterableDataset, get_worker_info


class TokenFileStream(IterableDataset):
    def __init__(self, files, seq_len):
        rank = int(os.environ.get("RANK", 0))
        world = int(os.environ.get("WORLD_SIZE", 1))
        self.files = files[rank::world]
        self.seq_len = seq_len

    def __iter__(self):
        info = get_worker_info()
        files = self.files if info is None else self.files[info.id::info.num_workers]
        for path in files:
            tokens = np.fromfile(path, dtype=np.uint16)
            for start in range(0, len(tokens) - self.seq_len, self.seq_len):
                yield torch.from_numpy(tokens[start:start + self.seq_len].astype(np.int64))


def main(model, optimizer, files):
    dist.init_process_group("nccl")
    train_loader = DataLoader(TokenFileStream(files, 512), batch_size=8, num_workers=2)
    mosaic_loader = DataLoader(StreamingDataset(remote="s3://bucket/train", local="/tmp/cache"), batch_size=8)
    for x, extra in zip(train_loader, itertools.cycle(mosaic_loader)):
        loss = model(x, extra)
        loss.backward()
        optimizer.step()
