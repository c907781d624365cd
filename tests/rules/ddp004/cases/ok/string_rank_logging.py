import os
import json
import torch.distributed as dist

dist.init_process_group("nccl")
if os.environ["RANK"] == "0":
    with open("run_config.json") as f:
        print(json.load(f))
    print("starting training")
dist.barrier()
