import torch
import torch.distributed as dist

dist.init_process_group("nccl")
rank = dist.get_rank()
box = [None]
if rank == 0:  # <- DDP004
    match "parquet":
        case "parquet":
            import pandas as pd
            box = [pd.read_parquet("train.parquet")]
dist.broadcast_object_list(box, src=0)
df = box[0]
