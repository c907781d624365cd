import json
import torch
import torch.distributed as dist
from datasets import Dataset


def get_dataset(path, tokenizer):
    def tokenize_sample(sample):
        return {"ids": tokenizer.encode(sample["question"])}

    dataset = Dataset.from_list(json.load(open(path)))
    if torch.cuda.device_count() > 1:
        if dist.get_rank() == 0:                  # <- DDP004
            processed = [dataset.map(tokenize_sample, num_proc=32)]
        else:
            processed = [None]
        dist.broadcast_object_list(processed, src=0)
        dataset = processed[0]
    else:
        dataset = dataset.map(tokenize_sample, num_proc=32)
    return dataset
