"""DDP011 where it depends on what a value is where it is used, in program order, and on which
scripts are distributed: an attribute that shares its name with a local variable. Every shape is
tested on what must be flagged and on what must be left alone."""

from __future__ import annotations


# -- an attribute is not a variable ----------------------------------------------------------------
def test_attribute_never_resolves_to_the_local_of_the_same_name(lint):
    source = """
        import torch
        import torch.distributed as dist
        from torch.utils.data import DataLoader, DistributedSampler

        def main(args):
            dist.init_process_group("nccl")
            rank = dist.get_rank()
            seed = args.seed + rank
            torch.manual_seed(seed)
            sampler = DistributedSampler(ds, seed={seed})
            loader = DataLoader(ds, sampler=sampler)
        """
    assert lint(source.format(seed="args.seed"), ["DDP011"]) == []
    assert lint(source.format(seed="seed"), ["DDP011"]) == [(10, "DDP011")]
