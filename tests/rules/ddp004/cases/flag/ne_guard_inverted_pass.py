import torch.distributed as dist
from my_project.data import tokenize

dist.init_process_group("nccl")
rank = dist.get_rank()
box = [None]
if rank != 0:  # <- DDP004
    pass
else:
    with open("corpus.txt") as fh:
        box = [tokenize(fh.read())]
dist.broadcast_object_list(box, src=0)
tokens = box[0]
