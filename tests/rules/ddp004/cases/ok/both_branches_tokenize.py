import datasets
import torch
import torch.distributed as dist
from transformers import AutoTokenizer

dist.init_process_group("nccl")
torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())  # each rank's own GPU
rank = dist.get_rank()
tokenizer = AutoTokenizer.from_pretrained("gpt2")
raw = datasets.load_dataset("wikitext", "wikitext-2-raw-v1", split="train").shard(dist.get_world_size(), rank)
if rank == 0:
    tokenized = raw.map(lambda b: tokenizer(b["text"]), batched=True, desc="Tokenizing")
else:
    datasets.disable_progress_bars()
    tokenized = raw.map(lambda b: tokenizer(b["text"]), batched=True)
dist.barrier()
print(rank, len(tokenized))
