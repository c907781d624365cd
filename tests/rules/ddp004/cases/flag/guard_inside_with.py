import torch
import torch.distributed as dist
import pandas as pd

dist.init_process_group("nccl")
rank = dist.get_rank()
payload = [None]
with torch.no_grad():
    if rank == 0:  # <- DDP004
        payload = [pd.read_csv("train.csv").values]
    dist.broadcast_object_list(payload, src=0)
table = payload[0]
