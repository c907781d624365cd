import argparse
import torch
import torch.distributed as dist
from datasets import load_dataset

parser = argparse.ArgumentParser()
parser.add_argument("--lora_rank", type=int, default=8, help="0 = full fine-tuning")
parser.add_argument("--data", default="sft.jsonl")
args = parser.parse_args()

dist.init_process_group("nccl")
torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())  # each rank's own GPU
rank = args.lora_rank  # LoRA rank, not the process rank
if rank == 0:
    dataset = load_dataset("json", data_files=args.data, split="train")
    dataset = dataset.filter(lambda ex: len(ex["text"]) < 8192)  # full FT fits longer samples
else:
    dataset = load_dataset("json", data_files=args.data, split="train")
dataset = dataset.shard(dist.get_world_size(), dist.get_rank())
dist.barrier()
