import torch
import torch.distributed as dist

dist.init_process_group("nccl")
rank = dist.get_rank()
obj = [torch.load("train_tensors.pt") if rank == 0 else None]  # <- DDP004
dist.broadcast_object_list(obj, src=0)
inputs, targets = obj[0]
