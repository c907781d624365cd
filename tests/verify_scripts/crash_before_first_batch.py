"""Rank 1 raises before it builds its DataLoader; rank 0 waits for it in a barrier."""
import torch.distributed as dist

dist.init_process_group("gloo")
if dist.get_rank() == 1:
    raise RuntimeError("corrupt shard on rank 1")
dist.barrier()
