import os
import torch.distributed as dist
from datasets import load_dataset
from transformers import AutoTokenizer

dist.init_process_group("nccl")
local_rank = int(os.environ.get("LOCAL_RANK", -1))
master = local_rank in (-1, 0)
tokenizer = AutoTokenizer.from_pretrained("gpt2")
container = [None]
if master:  # <- DDP004
    ds = load_dataset("openwebtext", split="train[:5%]")
    container[0] = ds.map(lambda b: tokenizer(b["text"]), batched=True)["input_ids"]
dist.broadcast_object_list(container, src=0)
input_ids = container[0]
