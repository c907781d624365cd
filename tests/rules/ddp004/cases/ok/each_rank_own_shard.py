import torch
import torch.distributed as dist
from datasets import load_dataset

dist.init_process_group("nccl")
torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())  # each rank's own GPU
rank, world = dist.get_rank(), dist.get_world_size()
ds = load_dataset("json", data_files="train.jsonl")["train"].shard(num_shards=world, index=rank)
if rank == 0:
    print(f"rank 0 has {len(ds)} examples")
dist.barrier()
