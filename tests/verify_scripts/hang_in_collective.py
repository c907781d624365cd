"""Rank 0 enters a barrier that rank 1 never reaches: rank 0 hangs until it is killed."""
import time

import torch.distributed as dist

dist.init_process_group("gloo")
if dist.get_rank() == 0:
    dist.barrier()
else:
    time.sleep(3600)
