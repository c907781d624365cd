import torch
import torch.distributed as td
from my_project.data import build_dataset

td.init_process_group("nccl")
lst = [None]
if td.get_rank() == 0:  # <- DDP004
    lst[0] = build_dataset("configs/train.yaml")
td.broadcast_object_list(lst, src=0)
dataset = lst[0]
loss = torch.zeros(1)
