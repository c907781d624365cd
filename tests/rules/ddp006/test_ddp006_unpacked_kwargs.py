"""DDP006 when shuffle=True reaches the DataLoader through a `**kwargs` dict: a literal entry, or
one merged in with `update()` on some path, next to a sampler still makes torch raise."""

MERGED = """
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

dist.init_process_group("nccl")
loader_options = {{"batch_size": 32}}
if fast_path:
    extra = {{"num_workers": 4, {entry}}}
    loader_options.update(extra)
{later}sampler = DistributedSampler(train_set)
loader = DataLoader(train_set, sampler=sampler, **loader_options)
"""


def test_shuffle_merged_in_by_update_is_flagged(lint):
    source = MERGED.format(entry='"shuffle": True', later="")
    assert lint(source, select=["DDP006"]) == [(10, "DDP006")]


def test_shuffle_false_merged_in_is_left_alone(lint):
    source = MERGED.format(entry='"shuffle": False', later="")
    assert lint(source, select=["DDP006"]) == []


def test_shuffle_overridden_later_is_left_alone(lint):
    """One entry says True, a later item says False: not surely True, so no finding."""
    source = MERGED.format(entry='"shuffle": True', later='loader_options["shuffle"] = False\n')
    assert lint(source, select=["DDP006"]) == []


def test_an_unreadable_dict_merged_in_is_left_alone(lint):
    """A dict from a call may override the entry: nothing is assumed."""
    source = MERGED.format(entry='"shuffle": True', later="loader_options.update(read_options())\n")
    assert lint(source, select=["DDP006"]) == []


def test_literal_kwargs_with_shuffle_and_sampler_is_flagged(lint):
    source = """
    from torch.utils.data import DataLoader, DistributedSampler

    options = dict(batch_size=8, shuffle=True)
    sampler = DistributedSampler(train_set)
    loader = DataLoader(train_set, sampler=sampler, **options)
    """
    assert lint(source, select=["DDP006"]) == [(5, "DDP006")]


def test_sampler_and_shuffle_both_in_the_dict_is_flagged(lint):
    source = """
    from torch.utils.data import DataLoader, DistributedSampler

    options = {"shuffle": True, "batch_size": 8}
    options["sampler"] = DistributedSampler(train_set)
    loader = DataLoader(train_set, **options)
    """
    assert lint(source, select=["DDP006"]) == [(5, "DDP006")]


def test_shuffle_in_kwargs_without_a_sampler_is_left_alone(lint):
    source = """
    from torch.utils.data import DataLoader

    options = {"shuffle": True, "batch_size": 8}
    loader = DataLoader(train_set, sampler=None, **options)
    """
    assert lint(source, select=["DDP006"]) == []


def test_dicts_from_exclusive_arms_are_left_alone(lint):
    """A batch sampler in one arm, a sampler and a batch size in the other: never together."""
    source = """
    from torch.utils.data import BatchSampler, DataLoader, DistributedSampler

    sampler = DistributedSampler(train_set)
    if grouped:
        picking = {"batch_sampler": BatchSampler(sampler, 8, drop_last=True)}
    else:
        picking = {"sampler": sampler, "batch_size": 8, "drop_last": True}
    loader = DataLoader(train_set, num_workers=2, **picking)
    """
    assert lint(source, select=["DDP006"]) == []


def test_batch_sampler_and_batch_size_in_one_dict_is_flagged(lint):
    source = """
    from torch.utils.data import BatchSampler, DataLoader, DistributedSampler

    batches = BatchSampler(DistributedSampler(train_set), 8, drop_last=True)
    picking = {"batch_sampler": batches, "batch_size": 8}
    loader = DataLoader(train_set, num_workers=2, **picking)
    """
    assert lint(source, select=["DDP006"]) == [(5, "DDP006")]
