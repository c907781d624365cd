import torch
import torch.distributed as dist

dist.init_process_group("nccl"); torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())
rank = dist.get_rank()
labels = torch.empty(1_000_000, dtype=torch.long, device="cuda")
if rank == 0:  # <- DDP004
    labels.copy_(torch.load("labels.pt").cuda())
dist.broadcast(labels, src=0)
