import torch
import torch.distributed as dist
from datasets import load_dataset, load_from_disk

dist.init_process_group("nccl")
torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())  # each rank's own GPU
cache_dir = "/scratch/tokenized_c4"
if dist.get_rank() == 0:
    ds = load_dataset("c4", "en", split="train[:1%]")
    ds = ds.map(lambda b: {"n_chars": [len(t) for t in b["text"]]}, batched=True)
    ds.save_to_disk(cache_dir)
dist.barrier()
train_ds = load_from_disk(cache_dir).shard(dist.get_world_size(), dist.get_rank())
