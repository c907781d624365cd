"""A GPU script whose training data is not on this machine: it reads a file that does not exist."""
import os

import torch
import torch.distributed as dist

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "no-such-data", "train.pt")

local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
features, targets = torch.load(DATA, map_location=f"cuda:{local_rank}")
