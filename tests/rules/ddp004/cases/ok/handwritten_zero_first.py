import os
import torch
import torch.distributed as dist
from datasets import load_dataset
from transformers import AutoTokenizer

dist.init_process_group("nccl")
torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())  # each rank's own GPU
local_rank = int(os.environ["LOCAL_RANK"])
tokenizer = AutoTokenizer.from_pretrained("gpt2")

if local_rank != 0:
    dist.barrier()  # wait for rank 0 to fill the datasets cache
raw = load_dataset("wikitext", "wikitext-103-raw-v1", split="train")
tokenized = raw.map(lambda b: tokenizer(b["text"]), batched=True, num_proc=8)
if local_rank == 0:
    dist.barrier()  # release the other ranks; they hit the cache
