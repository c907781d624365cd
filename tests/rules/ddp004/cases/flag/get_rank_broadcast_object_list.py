import pandas as pd
import torch.distributed as dist

dist.init_process_group("nccl")
payload = [None]
if dist.get_rank() == 0:  # <- DDP004
    df = pd.read_parquet("s3://bucket/clicks/2024/")
    df = df[df.dwell_ms > 500].sample(frac=1.0, random_state=0)
    payload = [df.to_dict("list")]
dist.broadcast_object_list(payload, src=0)
records = payload[0]
