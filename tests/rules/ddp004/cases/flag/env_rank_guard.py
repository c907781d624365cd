import os
import pickle
import torch.distributed as dist
from my_project.text import tokenize

dist.init_process_group("nccl")
objs = [None]
if int(os.environ["RANK"]) == 0:  # <- DDP004
    with open("corpus.txt") as f:
        objs = [tokenize(f.read())]
dist.broadcast_object_list(objs, src=0)
tokens = objs[0]
with open(f"/tmp/tokens_{os.environ['RANK']}.pkl", "wb") as f:
    pickle.dump(tokens[:10], f)
