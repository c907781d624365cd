import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def DataParallel(module):
    """Project helper: wrap for data parallelism the right way (DDP, one process per GPU)."""
    local_rank = int(os.environ["LOCAL_RANK"])
    return DDP(module.cuda(local_rank), device_ids=[local_rank])


dist.init_process_group("nccl")
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
model = DataParallel(torch.nn.Linear(16, 1))
