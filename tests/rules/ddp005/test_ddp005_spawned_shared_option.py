"""DDP005: a worker started with `mp.spawn` that picks its GPU from an option every worker shares.

`mp.spawn(worker, args=(world, args))` calls `worker(i, world, args)` in each process: only the
index `i` differs. A worker that makes `args.gpu` current, where `--gpu` defaults to 0 and the
worker never replaces it with its index, puts every worker on GPU 0.
"""

from __future__ import annotations

SPAWNING = """
    import argparse
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp

    def worker(index, world, args):
        dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29400", rank=index, world_size=world)
        torch.cuda.set_device(args.gpu)
        net = torch.nn.Linear(4, 4).cuda(args.gpu)

    if __name__ == "__main__":
        parser = argparse.ArgumentParser()
        parser.add_argument("--gpu", type=int, default=0)
        args = parser.parse_args()
        world = torch.cuda.device_count()
        mp.spawn(worker, args=(world, args), nprocs=world)
    """


def ddp005(lint, source: str) -> list[int]:
    return [line for line, code in lint(source, ["DDP005"]) if code == "DDP005"]


def test_spawned_workers_sharing_a_zero_default_gpu_option_are_flagged(lint):
    assert ddp005(lint, SPAWNING) == [8]


def test_option_named_by_dest_is_flagged(lint):
    source = SPAWNING.replace('"--gpu", type=int, default=0', '"--device-index", dest="gpu", type=int, default=0')
    assert ddp005(lint, source) == [8]


def test_worker_that_stores_its_index_in_the_option_is_left_alone(lint):
    source = SPAWNING.replace(
        "        dist.init_process_group(", "        args.gpu = index\n        dist.init_process_group(", 1
    )
    assert ddp005(lint, source) == []


def test_worker_using_its_index_is_left_alone(lint):
    source = SPAWNING.replace("set_device(args.gpu)", "set_device(index)").replace(".cuda(args.gpu)", ".cuda(index)")
    assert ddp005(lint, source) == []


def test_worker_handing_args_to_a_set_up_helper_is_left_alone(lint):
    # The helper (here or in another module) may write the worker's GPU into args.gpu.
    source = SPAWNING.replace(
        "        torch.cuda.set_device(args.gpu)", "        configure(index, args)\n        torch.cuda.set_device(args.gpu)"
    )
    assert ddp005(lint, source) == []


def test_option_without_a_zero_default_is_left_alone(lint):
    source = SPAWNING.replace('"--gpu", type=int, default=0', '"--gpu", type=int, default=None')
    assert ddp005(lint, source) == []
