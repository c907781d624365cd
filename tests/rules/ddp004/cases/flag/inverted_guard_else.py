import torch
import torch.distributed as dist
from my_project.data import load_data, preprocess

dist.init_process_group("nccl")
rank = dist.get_rank()
if rank != 0:  # <- DDP004
    payload = [None]
else:
    payload = [preprocess(load_data("train.jsonl"))]
dist.broadcast_object_list(payload, src=0)
train_examples = payload[0]
print(len(train_examples), torch.cuda.device_count())
