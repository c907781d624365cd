import json
import torch.distributed as dist


def preprocess(lines):
    return [json.loads(l) for l in lines if l.strip()]


def get_samples(rank, path):
    box = [None]
    if 0 == rank:  # <- DDP004
        with open(path) as f:
            box[0] = preprocess(f.readlines())
    dist.broadcast_object_list(box, src=0)
    return box[0]


dist.init_process_group("nccl")
samples = get_samples(dist.get_rank(), "train.jsonl")
