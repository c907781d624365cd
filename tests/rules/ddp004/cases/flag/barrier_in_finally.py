import torch
import torch.distributed as dist
from torchvision import datasets

dist.init_process_group("nccl")
torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())  # each rank's own GPU
rank = dist.get_rank()
try:
    if rank == 0:  # <- DDP004
        ds = datasets.ImageFolder("/data/imagenet/train")
        torch.save(ds.samples, "/dev/shm/samples.pt")
finally:
    dist.barrier()
samples_len = 1_281_167
