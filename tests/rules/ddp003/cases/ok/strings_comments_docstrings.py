"""Fine-tune ResNet-50.

Older versions of this script used nn.DataParallel(model); we now launch
with torchrun and use DistributedDataParallel instead.
"""
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

# model = torch.nn.DataParallel(model)  # removed: GPU 0 bottleneck
dist.init_process_group("nccl")
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
model = DistributedDataParallel(torch.nn.Linear(16, 1).cuda(), device_ids=[local_rank])
print("wrapping: %s" % "DataParallel(model) is deprecated here")
help_text = """
    --dp   use torch.nn.DataParallel(model) (unsupported)
"""
