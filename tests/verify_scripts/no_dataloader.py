"""A distributed script that never builds a DataLoader."""
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
total = torch.ones(4)
dist.all_reduce(total)
print(f"rank {dist.get_rank()}: {total.tolist()}")
dist.destroy_process_group()
