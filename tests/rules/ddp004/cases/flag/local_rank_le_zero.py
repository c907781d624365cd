import os
import numpy as np
import torch
import torch.distributed as dist

dist.init_process_group("nccl")
local_rank = int(os.environ.get("LOCAL_RANK", -1))
torch.cuda.set_device(max(local_rank, 0))
table = torch.zeros(1_000_000, 32, device="cuda")
if local_rank <= 0:  # <- DDP004
    table.copy_(torch.from_numpy(np.load("item_features.npy")).cuda())
dist.broadcast(table, src=0)
