import torch.distributed as dist
from my_project.augment import load_data, preprocess

dist.init_process_group("nccl")
rank = dist.get_rank()
for epoch in range(10):
    epoch_data = [None]
    if rank == 0:  # <- DDP004
        epoch_data = [preprocess(load_data(f"shards/epoch_{epoch}.bin"))]
    dist.broadcast_object_list(epoch_data, src=0)
    batch_source = epoch_data[0]
