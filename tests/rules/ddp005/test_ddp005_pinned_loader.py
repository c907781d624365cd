"""DDP005: a `DataLoader(..., pin_memory=True)` uses the current CUDA device.

The loader's pinning thread takes the current device as its own and pins batches through that
device's context. Without `torch.cuda.set_device`, that is GPU 0 in every rank: each process opens
a context on GPU 0 even when the model and the batches go to `cuda:<rank>`.
"""

from __future__ import annotations

WORKER = """
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp
    from torch.utils.data import DataLoader, DistributedSampler

    def worker(rank, world_size, dataset):
        dist.init_process_group("nccl", rank=rank, world_size=world_size)
        {made_current}
        model = torch.nn.Linear(4, 4).to(rank)
        loader = DataLoader(dataset, batch_size=8, sampler=DistributedSampler(dataset), pin_memory={pin})
        for x in loader:
            model(x.to(rank)).sum().backward()

    if __name__ == "__main__":
        mp.spawn(worker, args=(2, list(range(64))), nprocs=2)
    """


def ddp005(lint, source: str) -> list[int]:
    return [line for line, code in lint(source, ["DDP005"]) if code == "DDP005"]


def test_pinning_loader_in_ranks_that_never_set_a_device_is_flagged_at_the_group_start(lint):
    source = WORKER.format(made_current="pass", pin="True")
    assert ddp005(lint, source) == [7]


def test_pinning_loader_after_set_device_is_left_alone(lint):
    source = WORKER.format(made_current="torch.cuda.set_device(rank)", pin="True")
    assert ddp005(lint, source) == []


def test_loader_that_does_not_pin_leaves_the_program_with_named_devices_only(lint):
    # every other CUDA call names the rank's device: nothing is left to the current device
    source = WORKER.format(made_current="pass", pin="False")
    assert ddp005(lint, source) == []


def test_pinning_loader_names_the_rank_device_that_is_never_made_current(lint):
    source = """
        import os
        import torch
        import torch.distributed as dist
        from torch.utils.data import DataLoader

        dist.init_process_group("nccl")
        local_rank = int(os.environ["LOCAL_RANK"])
        device = torch.device("cuda", local_rank)
        loader = DataLoader(range(10), batch_size=2, pin_memory=True)
        """
    found = lint(source, ["DDP005"])
    assert [line for line, _ in found] == [8]


def test_pinning_loader_built_on_rank_zero_only_is_left_alone(lint):
    source = """
        import os
        import torch
        import torch.distributed as dist
        from torch.utils.data import DataLoader

        dist.init_process_group("nccl")
        local_rank = int(os.environ["LOCAL_RANK"])
        device = torch.device("cuda", local_rank)
        if dist.get_rank() == 0:
            loader = DataLoader(range(10), batch_size=2, pin_memory=True)
        """
    # rank 0's current device is GPU 0, its own
    assert ddp005(lint, source) == []
