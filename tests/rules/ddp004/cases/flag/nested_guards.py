import os
import torch
import torch.distributed as dist
from my_project.data import build_dataset

dist.init_process_group("nccl")
rank = dist.get_rank()
box = [None]
if not os.environ.get("SKIP_DATA"):
    if rank == 0:  # <- DDP004
        box = [build_dataset("train")]
dist.broadcast_object_list(box, src=0)
dataset = box[0]
