import os
import torch
import torch.distributed as dist
import wandb


def is_main_process():
    return not dist.is_initialized() or dist.get_rank() == 0


dist.init_process_group("nccl")
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
if is_main_process():
    wandb.init(project="ddp-demo", config={"lr": 0.1})
    wandb.save("config.yaml")
dist.barrier()
stats = torch.tensor([1.0, 2.0], device="cuda")
dist.broadcast(stats, src=0)
if is_main_process():
    wandb.log({"mean": stats.mean().item()})
