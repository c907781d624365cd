import os
import numpy as np
import pandas as pd
import torch
import torch.distributed as dist

dist.init_process_group("nccl")
torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())  # each rank's own GPU
rank = dist.get_rank()
cache = "features.npy"
if rank == 0 and not os.path.exists(cache):
    df = pd.read_csv("raw_events.csv")
    np.save(cache, df[["x0", "x1", "x2"]].to_numpy(dtype=np.float32))
dist.barrier()
features = torch.from_numpy(np.load(cache, mmap_mode="r")[dist.get_rank()::dist.get_world_size()].copy())
