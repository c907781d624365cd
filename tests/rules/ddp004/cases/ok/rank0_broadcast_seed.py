import random
import torch
import torch.distributed as dist

dist.init_process_group("nccl")
seed = [None]
if dist.get_rank() == 0:
    seed = [random.randint(0, 2**31)]
dist.broadcast_object_list(seed, src=0)
torch.manual_seed(seed[0])
