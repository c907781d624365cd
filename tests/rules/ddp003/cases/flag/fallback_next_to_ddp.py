import os
import torch
import torch.distributed as dist
from torch.nn import DataParallel

if "LOCAL_RANK" in os.environ:
    dist.init_process_group("nccl"); torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())
    local_rank = int(os.environ["LOCAL_RANK"])
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 8).cuda(local_rank), device_ids=[local_rank])
else:
    model = DataParallel(torch.nn.Linear(8, 8).cuda())  # <- DDP003
