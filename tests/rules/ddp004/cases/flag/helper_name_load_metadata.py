import os
import pandas as pd
import torch.distributed as dist


def load_metadata(root):
    return pd.read_csv(os.path.join(root, "train.csv")), pd.read_csv(os.path.join(root, "series.csv"))


def distributed_metadata(root, distributed, rank):
    objects = [load_metadata(root) if rank == 0 else None]   # <- DDP004
    if distributed:
        dist.broadcast_object_list(objects, src=0)
    return objects[0]


if __name__ == "__main__":
    dist.init_process_group("nccl")
    meta = distributed_metadata("/data", True, dist.get_rank())
