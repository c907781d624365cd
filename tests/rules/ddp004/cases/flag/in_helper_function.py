import torch
import torch.distributed as dist
from my_project.data import load_data, preprocess


def get_data(path):
    obj = [None]
    if dist.get_rank() == 0:  # <- DDP004
        obj = [preprocess(load_data(path))]
    dist.broadcast_object_list(obj, src=0)
    return obj[0]


def main():
    dist.init_process_group("nccl")
    torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())  # each rank's own GPU
    data = get_data("train.bin")
    print(len(data), torch.cuda.current_device())


if __name__ == "__main__":
    main()
