import json
import torch.distributed as dist

dist.init_process_group("nccl")
rank = dist.get_rank()
# read the run config once so every rank trains with the identical settings
cfg = [None]
if rank == 0:
    with open("run_config.json") as f:
        cfg = [json.load(f)]
dist.broadcast_object_list(cfg, src=0)
config = cfg[0]
lr, batch_size = config["lr"], config["batch_size"]
print(f"rank {rank}: lr={lr} bs={batch_size}")
