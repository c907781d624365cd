import glob
import random
import torch.distributed as dist

dist.init_process_group("nccl")
rank, world = dist.get_rank(), dist.get_world_size()
file_list = [None]
if rank == 0:
    shards = sorted(glob.glob("/data/shards/*.tar"))
    random.Random(1234).shuffle(shards)
    file_list = [shards]
dist.broadcast_object_list(file_list, src=0)
my_shards = file_list[0][rank::world]
print(f"rank {rank} reads {len(my_shards)} shards")
