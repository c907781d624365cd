import torch
import torch.distributed as dist

dist.init_process_group("nccl"); torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())
rank = dist.get_rank()
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 1).cuda())
best = [None]
if rank == 0:
    torch.save(model.module.state_dict(), "best.pt")
    best = [0.91]
dist.broadcast_object_list(best, src=0)
