import pandas as pd
import torch.distributed as dist

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
out = [None]
if rank == 0:  # <- DDP004
    df = pd.read_csv("train.csv")
    chunks = [df.iloc[i::world].to_dict("records") for i in range(world)]
else:
    chunks = None
dist.scatter_object_list(out, chunks, src=0)
my_rows = out[0]
