import os
import torch
import torch.distributed as dist

dist.init_process_group("nccl")
box = [None]
if int(os.getenv("LOCAL_RANK", 0)) == 0:  # <- DDP004
    box = [torch.load("features.pt")]
dist.broadcast_object_list(box, src=0)
features = box[0]
