import argparse
import torch.distributed as dist
from my_project.text import tokenize, read_lines

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
args = parser.parse_args()
dist.init_process_group("nccl")
out = [None]
if args.local_rank <= 0:  # <- DDP004
    out = [tokenize(read_lines("wiki.txt"))]
dist.broadcast_object_list(out, src=0)
tokens = out[0]
