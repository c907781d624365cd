import argparse
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

parser = argparse.ArgumentParser()
parser.add_argument("--resume", default="")
args = parser.parse_args()
dist.init_process_group("nccl")
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
model = torch.nn.Sequential(torch.nn.Linear(1024, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 10))
if dist.get_rank() == 0 and args.resume:
    ckpt = torch.load(args.resume, map_location="cpu")
    model.load_state_dict(ckpt["model"])
    print(f"resumed from epoch {ckpt['epoch']}")
dist.barrier()
# DDP's constructor broadcasts rank 0's parameters to every other rank
model = DDP(model.cuda(local_rank), device_ids=[local_rank])
