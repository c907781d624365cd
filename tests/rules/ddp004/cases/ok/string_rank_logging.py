import os
import json
import torch
import torch.distributed as dist

dist.init_process_group("nccl")
torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())  # each rank's own GPU
if os.environ["RANK"] == "0":
    with open("run_config.json") as f:
        print(json.load(f))
    print("starting training")
dist.barrier()
