import asyncio
import torch.distributed as dist
from my_project.data import load_data


async def fetch():
    box = [None]
    if dist.get_rank() == 0:  # <- DDP004
        box = [load_data("s3://bucket/train")]
    dist.broadcast_object_list(box, src=0)
    return box[0]


dist.init_process_group("nccl")
data = asyncio.run(fetch())
