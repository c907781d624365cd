import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("nccl")
rank = dist.get_rank()
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
model = torch.nn.Linear(4096, 4096)
if rank == 0 and os.path.exists("pretrained.pt"):
    # only rank 0 reads the weights; DDP broadcasts rank 0's parameters on construction
    model.load_state_dict(torch.load("pretrained.pt", map_location="cpu"))
dist.barrier()
model = DDP(model.cuda(local_rank), device_ids=[local_rank])
