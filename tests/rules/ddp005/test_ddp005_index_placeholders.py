"""DDP005: a rank's CUDA device written with a format placeholder that carries a format spec.

`"cuda:{:d}".format(rank)` and `"cuda:%i" % rank` build the rank's own device exactly like
`"cuda:{}".format(rank)`; without `torch.cuda.set_device` that device is still never current.
"""

from __future__ import annotations

import pytest


def ddp005_lines(lint, source: str) -> list[int]:
    return [line for line, code in lint(source, ["DDP005"]) if code == "DDP005"]


WORKER = """
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp

    def worker(rank, world_size):
        dist.init_process_group("nccl", rank=rank, world_size=world_size)
        device = torch.device({spelling})
        net = torch.nn.Linear(4, 4).to(device)
        {made_current}
        torch.cuda.empty_cache()

    if __name__ == "__main__":
        mp.spawn(worker, args=(2,), nprocs=2)
    """


@pytest.mark.parametrize(
    "spelling", ['"cuda:{:d}".format(rank)', '"cuda:{0:d}".format(rank)', '"cuda:%i" % rank', '"cuda:%s" % rank']
)
def test_rank_device_with_a_format_spec_never_made_current_is_flagged(lint, spelling):
    source = WORKER.format(spelling=spelling, made_current="pass")
    # reported where the rank's device is built: the place to make it current
    assert ddp005_lines(lint, source) == [7]


@pytest.mark.parametrize("spelling", ['"cuda:{:d}".format(rank)', '"cuda:%i" % rank'])
def test_rank_device_with_a_format_spec_made_current_is_left_alone(lint, spelling):
    source = WORKER.format(spelling=spelling, made_current="torch.cuda.set_device(device)")
    assert ddp005_lines(lint, source) == []


@pytest.mark.parametrize("spelling", ['"cuda:{:d}{:d}".format(a, b)', '"cuda:{x}".format(x=0)', '"cuda:%i" % 0'])
def test_strings_that_hold_no_single_computed_index_are_not_taken_for_one(lint, spelling):
    source = f"""
        import torch
        import torch.distributed as dist

        dist.init_process_group("nccl")
        label = {spelling}
        dist.barrier()
        """
    # the report stays on the NCCL start: the string is not the rank's device
    assert ddp005_lines(lint, source) == [4]
