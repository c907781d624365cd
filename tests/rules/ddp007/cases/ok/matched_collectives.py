"""Collectives that every rank makes, written the ways real scripts write them."""

import torch
import torch.distributed as dist
from accelerate import Accelerator


def collect_predictions(preds, rank, world_size):
    if rank == 0:
        buckets = [torch.empty_like(preds) for _ in range(world_size)]
        dist.gather(preds, gather_list=buckets, dst=0)
        return torch.cat(buckets)
    else:
        dist.gather(preds, dst=0)
        return None


def prepare_once(local_rank, build_cache):
    if local_rank not in (-1, 0):
        dist.barrier()
    build_cache()
    if local_rank == 0:
        dist.barrier()


def save_and_sync(model, rank):
    if rank == 0:
        torch.save(model.state_dict(), "last.pt")
    dist.barrier()


def accelerate_save(model):
    accelerator = Accelerator()
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        accelerator.save(accelerator.unwrap_model(model).state_dict(), "final.pt")


def main():
    dist.init_process_group("nccl")
    rank, world_size = dist.get_rank(), dist.get_world_size()
    preds = torch.randn(8)
    collect_predictions(preds, rank, world_size)
