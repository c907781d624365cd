"""Each process is shown exactly one GPU, so cuda:0 is its own GPU."""

import os
import sys

import torch
import torch.distributed as dist


def main(local_rank):
    os.environ["CUDA_VISIBLE_DEVICES"] = str(local_rank)
    dist.init_process_group("nccl")
    model = torch.nn.Linear(4, 4).to("cuda:0")
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[0])
    model(torch.ones(2, 4, device="cuda:0")).sum().backward()


if __name__ == "__main__":
    main(int(sys.argv[1]))
