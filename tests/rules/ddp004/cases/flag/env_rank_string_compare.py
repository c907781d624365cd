import os
import torch.distributed as dist
from datasets import load_dataset

dist.init_process_group("nccl")
holder = [None]
if os.environ["RANK"] == "0":  # <- DDP004
    holder = [load_dataset("json", data_files="train.jsonl")["train"]]
dist.broadcast_object_list(holder, src=0)
train_ds = holder[0]
