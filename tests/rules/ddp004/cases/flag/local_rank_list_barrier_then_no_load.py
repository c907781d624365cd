import os
import torch
import torch.distributed as dist
from datasets import load_dataset

dist.init_process_group("nccl")
torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())  # each rank's own GPU
local_rank = int(os.environ["LOCAL_RANK"])
shared = [None]
if local_rank in [-1, 0]:  # <- DDP004
    raw = load_dataset("squad", split="train")
    shared = [raw.filter(lambda ex: len(ex["context"]) < 2000).to_list()]
dist.barrier()
dist.broadcast_object_list(shared, src=0)
examples = shared[0]
