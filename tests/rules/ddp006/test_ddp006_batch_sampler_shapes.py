"""DDP006 for two batch_sampler shapes: a DataLoader subclass that builds itself with its own
batch sampler through `super().__init__` while forwarding a `drop_last` its callers choose, and a
per-index sampler (`DistributedSampler`) handed to `batch_sampler` on the multi-GPU path."""

SUBCLASS = """
from torch.utils.data import DataLoader

class PoissonLoader(DataLoader):
    def __init__(self, dataset, *, rate, drop_last=False, num_workers=0):
        batch_sampler = PoissonBatches(len(dataset), rate)
        super().__init__(
            dataset=dataset,
            batch_sampler=batch_sampler,
            num_workers=num_workers,
            {forwarded}
        )

    @classmethod
    def from_loader(cls, loader):
        return cls(loader.dataset, rate=1 / len(loader), drop_last=loader.drop_last)
"""


def test_subclass_forwarding_drop_last_next_to_its_batch_sampler_is_flagged(lint):
    source = SUBCLASS.format(forwarded="drop_last=drop_last,")
    assert lint(source, select=["DDP006"]) == [(6, "DDP006")]


def test_subclass_that_keeps_drop_last_to_itself_is_left_alone(lint):
    """The fixed shape: drop_last is accepted (and ignored) but never reaches DataLoader."""
    source = SUBCLASS.format(forwarded="")
    assert lint(source, select=["DDP006"]) == []


def test_wrapper_whose_batch_sampler_is_also_the_callers_choice_is_left_alone(lint):
    """Both values come from the caller: passing a batch sampler with drop_last=True is the
    caller's mistake, not this function's."""
    source = """
    from torch.utils.data import DataLoader

    def make_loader(dataset, batch_sampler=None, drop_last=False):
        return DataLoader(dataset, batch_sampler=batch_sampler, drop_last=drop_last)
    """
    assert lint(source, select=["DDP006"]) == []


def test_subclass_of_a_project_loader_is_left_alone(lint):
    """`super()` is some other class: its __init__ may take these arguments differently."""
    source = """
    class PoissonLoader(ProjectLoader):
        def __init__(self, dataset, drop_last=False):
            super().__init__(dataset, batch_sampler=PoissonBatches(dataset), drop_last=drop_last)
    """
    assert lint(source, select=["DDP006"]) == []


PER_INDEX = """
import torch
from torch.utils.data import DataLoader, DistributedSampler

def build(train_set, options):
    train_sampler = None
    if options.pk:
        train_sampler = PKBatches(train_set, options.batch_size)
    if torch.cuda.device_count() > 1:
        train_sampler = {sampler}
    return DataLoader(dataset=train_set, shuffle=(train_sampler is None), batch_sampler=train_sampler, **options.loader)
"""


def test_distributed_sampler_passed_as_batch_sampler_is_flagged(lint):
    source = PER_INDEX.format(sampler="DistributedSampler(dataset=train_set)")
    assert lint(source, select=["DDP006"]) == [(10, "DDP006")]


def test_distributed_sampler_wrapped_in_a_batch_sampler_is_left_alone(lint):
    source = PER_INDEX.format(
        sampler="torch.utils.data.BatchSampler(DistributedSampler(train_set), batch_size=8, drop_last=True)"
    )
    assert lint(source, select=["DDP006"]) == []


def test_per_index_sampler_passed_as_sampler_is_left_alone(lint):
    source = """
    from torch.utils.data import DataLoader, RandomSampler

    loader = DataLoader(train_set, batch_size=8, sampler=RandomSampler(train_set))
    """
    assert lint(source, select=["DDP006"]) == []
